"""The CLI surface: version, help for every command, error mapping."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from drill import __version__
from drill.cli import app

runner = CliRunner()


def all_commands(group=None, prefix=()):
    """Every leaf command as its argument path, e.g. ('bank', 'list')."""
    group = group or typer.main.get_command(app)
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            yield from all_commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"drill {__version__}"


def test_every_command_has_a_one_line_help_and_an_unbroken_example_at_80_columns():
    commands = list(all_commands())
    assert len(commands) >= 10
    for path, cmd in commands:
        assert cmd.short_help and cmd.epilog.startswith("Example: drill "), path
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, path
        assert cmd.epilog in result.stdout, path  # on one line, not wrapped mid-command


def test_top_level_help_lists_every_command():
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    for name in typer.main.get_command(app).commands:
        assert name in result.stdout


def test_unknown_command_is_a_usage_error():
    result = runner.invoke(app, ["frobnicate"])
    assert result.exit_code == 2


def test_doctor_reports_data_home_banks_and_torch(drill_home):
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    assert str(drill_home) in result.stdout
    assert "questions" in result.stdout and "torch" in result.stdout and "cuda" in result.stdout


def test_debug_flag_shows_the_traceback():
    result = runner.invoke(app, ["--debug", "bank", "show", "no-such-id"])
    assert result.exit_code != 0
    assert result.exception is not None and type(result.exception).__name__ == "DrillError"


def test_error_messages_print_user_text_literally():
    """A value that looks like rich markup is quoted as typed, not parsed (no MarkupError traceback)."""
    result = runner.invoke(app, ["config", "set", "lang", "[/]"])
    assert result.exit_code == 2
    assert "error: config lang: '[/]' must be one of en, zh" in result.stderr


def test_an_unknown_language_is_one_line():
    result = runner.invoke(app, ["quiz", "--lang", "fr"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --lang: 'fr' is not one of en, zh"


@pytest.mark.parametrize(
    "argv",
    [["bank", "list", "--level", "L1"], ["bank", "show", "attn-why-sqrt-dk"], ["config", "list"], ["tasks", "--json"],
     ["bank", "--help"], ["--help"], ["bank", "lst"], ["frobnicate"], [], ["--version"], ["--lang", "zh"],
     ["--lang", "zh", "bank", "list", "--level", "L3"], ["--lang", "fr", "stats"]],
    ids=lambda a: " ".join(a) or "(bare)",
)
def test_the_pruned_command_tree_behaves_as_the_whole(argv):
    """main() builds Click commands only for the command it runs: output and exit code are the whole tree's."""
    from drill.cli import pruned

    whole = runner.invoke(app, argv, env={"COLUMNS": "100"})
    alone = runner.invoke(pruned(app, argv), argv, env={"COLUMNS": "100"})
    assert (alone.exit_code, alone.stdout, alone.stderr) == (whole.exit_code, whole.stdout, whole.stderr)


def test_pruning_keeps_only_the_command_that_runs():
    from drill.cli import pruned

    kept = pruned(app, ["bank", "list", "--json"])
    assert [c.name for c in kept.registered_commands] == []
    assert [(g.name, [c.name for c in g.typer_instance.registered_commands]) for g in kept.registered_groups] == [("bank", ["list"])]
    assert pruned(app, []).registered_commands == [] and pruned(app, ["--help"]) is app
    assert [g.name for g in pruned(app, ["--lang", "zh", "bank", "list"]).registered_groups] == ["bank"]
    assert len(app.registered_commands) > 10  # the module's own tree is untouched


def test_lang_before_the_command_is_every_screen_s_language(drill_home):
    """`drill --lang zh` shows today's plan in Chinese, and `drill --lang zh stats` is `drill stats --lang zh`."""
    assert runner.invoke(app, ["--lang", "zh"]).stdout.startswith("今日\n")
    assert runner.invoke(app, ["--lang", "zh", "stats"]).stdout == runner.invoke(app, ["stats", "--lang", "zh"]).stdout
    assert "Today" in runner.invoke(app, []).stdout  # the option does not outlive its command
