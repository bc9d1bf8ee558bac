"""`--help` in Chinese from the gettext catalog drill/text/locale/zh/LC_MESSAGES/help.po: every help text of every
command has a translation and the catalog holds nothing else, every help screen in zh has no English word outside
code, ids and names, English stays English, and the language comes from --lang, the config or the locale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from drill import cli, cli_help
from drill.cli import app

GROUPS = {info.name for info in app.registered_groups}

from whiteboard.zh_text import english_words

from catalog_files import CATALOG, compiled_and_committed

babel = pytest.importorskip("babel")
from babel.messages.pofile import read_po  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CJK = re.compile(r"[\u4e00-\u9fff]")
# Names a Chinese reader sees as they are: products, formats, hardware, option values and metavars (SCORE, DATE).
NAMES = {"LLM", "Transformer", "FSRS", "JSON", "Python", "Anki", "Jupyter", "Colab", "Markdown", "CUDA", "Triton", "SDPA",
         "GPU", "shell", "auto", "cpu", "cuda", "open", "choice", "numeric", "shape", "each", "end", "SCORE", "DATE", "TOPIC", "YYYY", "DD",
         "attention", "positions", "inference", "training", "streaks", "lang", "optimize"}  # fmt: skip


def po() -> dict[str, str]:
    with open(CATALOG / "help.po", "rb") as file:
        return {m.id: m.string for m in read_po(file) if m.id}


def helps(command, path=()):
    """Every (command path, help text) of a Click command tree: the command's help, short help and epilog, its params'
    (the help option and the completion ones included)."""
    params = command.get_params(typer.Context(command))
    for text in (command.help, command.short_help, command.epilog, *(p.help for p in params)):
        if text:
            yield path, text
    for name, sub in getattr(command, "commands", {}).items():
        yield from helps(sub, (*path, name))


def commands(command, path=()):
    """Every command path of a Click command tree, with the names of its arguments (shown as they are)."""
    yield path, {p.name for p in command.params if p.param_type_name == "argument"}
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


def test_every_help_text_has_a_chinese_translation_and_the_catalog_nothing_more():
    used = []
    cli_help.help_in(app, lambda text: used.append(text) or text)
    catalog = po()
    assert sorted(set(used)) == sorted(catalog), set(used) ^ set(catalog)
    assert all(catalog[msgid].strip() for msgid in used)
    english = {text for _, text in helps(typer.main.get_command(app))}
    chinese = list(helps(typer.main.get_command(cli_help.in_language(app, "zh"))))
    assert len(chinese) == len([1 for _ in helps(typer.main.get_command(app))])
    assert [(path, text) for path, text in chinese if text in english] == []  # nothing reachable was left English


def test_the_committed_mo_is_the_po_compiled_by_babel():
    fresh, committed = compiled_and_committed("help")
    assert len(fresh) > 50 and fresh == committed, "run: pybabel compile -d drill/text/locale -D help"


def test_chinese_typography():
    for msgid, msgstr in po().items():
        assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", msgstr), msgstr  # no space between two CJK characters
        assert not re.search(r"[\u4e00-\u9fff][,;:?!()]|[,;:?!(][\u4e00-\u9fff]", msgstr), msgstr  # full-width punctuation
        for code in re.findall(r"`[^`]+`|--[\w-]+|\$\w+|L[123]\b", msgid):
            assert code in msgstr, (code, msgstr)  # code, options and levels kept as they are


def ids() -> set[str]:
    from drill.completion import bundled_topics

    return set(cli.TASK_NAMES.split(", ")) | set(bundled_topics())


def english_left(screen: str, names: set[str]) -> list[str]:
    """The English words of a help screen once code is cut out: options, metavars, paths, commands, ids, names
    (and a word rich's table cut at its edge, ``torc…``: typer's option table does that in English too)."""
    text = ANSI.sub("", screen)
    text = re.sub(r"\w+…|'[^']*'|pip install|drill(?: [a-z][\w.-]*)*|--?[\w-]+|<[^>]*>|\{[^}]*\}|\$\w+|[\w./-]*[/.][\w./-]+|\w+(?:[-_]\w+)+", " ", text)
    return [w for w in english_words(text) if w not in NAMES | names]


def test_every_help_screen_in_chinese(drill_home):
    runner, paths = CliRunner(), list(commands(typer.main.get_command(app)))
    names = ids() | {name for path, _ in paths for name in path}  # command names are shown as they are
    assert len(paths) > 25
    for path, arguments in paths:
        for flag in ("--help", "-h"):
            result = runner.invoke(app, [*path, flag, "--lang", "zh"], env={"COLUMNS": "120"})
            assert result.exit_code == 0, (path, result.output)
            assert "用法：drill" in result.output and "显示本帮助并退出" in result.output, (path, result.output)
            assert english_left(result.output, names | arguments) == [], (path, result.output)
    bare = runner.invoke(app, ["--lang", "zh", "bank"], env={"COLUMNS": "120"})  # a bare group prints its help
    assert "查看和校验题库" in bare.output and "命令" in bare.output, bare.output


def test_the_checker_would_catch_english():
    assert english_left("│ --seed  <int>  Seed for a reproducible selection. │", set()) == ["Seed", "for", "reproducible", "selection"]
    assert english_left("│ --topic  <str>  主题：masks, attention-core。│  示例：drill bank list --level L2", {"masks"}) == []


def test_english_help_stays_english_after_a_chinese_one(drill_home):
    runner = CliRunner()
    assert "限时测验" in runner.invoke(app, ["--help", "--lang", "zh"], env={"COLUMNS": "120"}).output
    for args in (["--help"], ["--help", "--lang", "en"], ["quiz", "-h", "--lang", "en"], ["bank", "list", "--help", "--lang", "en"]):
        screen = runner.invoke(app, args, env={"COLUMNS": "120"}).output
        assert "Usage: drill" in screen and "Options" in screen and "Show this message and exit." in screen, screen
        assert CJK.findall(screen.replace("错题本", "")) == [], screen  # the mistakes command's own word for it
    quiz = runner.invoke(app, ["quiz", "--help"], env={"COLUMNS": "200"}).output
    assert "A timed quiz: unseen and missed questions first" in quiz and "[default: each]" in quiz and "Example: drill quiz" in quiz


def test_the_configured_language_and_the_locale_choose_the_help_too(drill_home, monkeypatch):
    runner = CliRunner()
    assert "Usage: drill" in runner.invoke(app, ["--help"]).output
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "用法：drill" in runner.invoke(app, ["tasks", "--help"]).output
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert runner.invoke(app, ["config", "set", "lang", "zh"]).exit_code == 0
    assert "用法：drill" in runner.invoke(app, ["--help"]).output
    assert "用法：drill history" in runner.invoke(app, ["history"]).output
    assert "Usage: drill" in runner.invoke(app, ["--help", "--lang", "en"]).output  # --lang wins over the config


def test_only_a_help_start_reads_the_catalog():
    assert cli_help.help_request(["bank", "list", "--lang", "zh"], GROUPS) is None and cli_help.help_request([], GROUPS) is None
    assert cli_help.help_request(["--lang", "zh"], GROUPS) is None  # bare drill is today's plan, not help
    assert cli_help.help_request(["bank", "list", "-h", "--lang=zh"], GROUPS) == ("zh", ["bank", "list", "-h"])
    assert cli_help.help_request(["--lang", "zh", "config"], GROUPS) == ("zh", ["config"])
