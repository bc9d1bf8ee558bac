"""Errors in the user's language from the gettext catalog drill/text/locale/zh/LC_MESSAGES/messages.po: Babel finds
exactly the catalog's msgids in drill's DrillError and Msg calls, each has a Chinese translation, the committed .mo is
the .po compiled; every error the CLI can be made to print reads Chinese with --lang zh (prefix and body, same exit
code) and stays the same English without it; --lang is accepted by every command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import drill
from drill.cli import app
from drill.errors import DrillError
from drill.text.messages import STRUCTURAL, Msg, translated

from whiteboard.zh_text import english_words

from catalog_files import CATALOG, compiled_and_committed

babel = pytest.importorskip("babel")
from babel.messages.extract import extract  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

PACKAGE = Path(drill.__file__).parent
KEYWORDS = {"DrillError": None, "StorageError": None, "Msg": None}  # the message's id is the first argument
CJK = re.compile(r"[\u4e00-\u9fff]")


def po() -> dict[str, str]:
    with open(CATALOG / "messages.po", "rb") as file:
        return {m.id: m.string for m in read_po(file) if m.id}


def extracted() -> set[str]:
    found = set(STRUCTURAL)
    for path in PACKAGE.rglob("*.py"):
        with open(path, "rb") as file:
            found |= {msgid for _, msgid, _, _ in extract("python", file, keywords=KEYWORDS)}
    return found


def test_the_catalog_holds_exactly_the_messages_drill_raises_each_translated():
    catalog, used = po(), extracted()
    assert used - set(catalog) == set(), "add them to messages.po"
    assert set(catalog) - used == set(), "no longer raised: remove them from messages.po"
    assert [msgid for msgid, msgstr in catalog.items() if not msgstr.strip()] == []
    for msgid, msgstr in catalog.items():  # the same named parameters, so rendering never fails
        assert sorted(re.findall(r"\{(\w+)", msgid)) == sorted(re.findall(r"\{(\w+)", msgstr)), msgid


def test_the_committed_mo_is_the_po_compiled_by_babel():
    fresh, committed = compiled_and_committed("messages")
    assert len(fresh) > 50 and fresh == committed, "run: pybabel compile -d drill/text/locale -D messages"


def test_chinese_typography():
    for msgid, msgstr in po().items():
        assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", msgstr), msgstr  # no space between two CJK characters
        assert not re.search(r"[\u4e00-\u9fff][,;:?!()]|[,;:?!(][\u4e00-\u9fff]", msgstr), msgstr  # full-width punctuation
        for code in re.findall(r"`[^`]+`|--[\w-]+|\$\w+|\bL[123]\b|\{\w+(?:![rs])?(?::\w+)?\}", msgid):
            assert code in msgstr, (code, msgstr)  # code, options, levels and parameters kept as they are
        if re.fullmatch(r"\{path\}:\{?\w+\}?: .*", msgid):
            assert msgstr.startswith(msgid.split(": ")[0] + ": "), msgstr  # file:line: stays readable by editors


def test_a_message_renders_its_phrases_in_the_language_and_its_names_as_they_are():
    exc = DrillError("unknown task {task!r}{hint} (tasks: {tasks})", task="rop", hint=Msg("; did you mean {name}?", name="rope"), tasks="rope, sdpa")
    assert str(exc) == "unknown task 'rop'; did you mean rope? (tasks: rope, sdpa)"  # the English text, as logs read it
    assert translated(exc.message, "zh") == "没有任务 'rop'；你是不是想输入 rope？（可用的任务：rope, sdpa）"
    assert translated(exc.message, "en") == str(exc)
    assert translated("a text that is no message", "zh") == "a text that is no message"
    wire = json.loads(json.dumps(exc.message.to_wire()))  # the judge's usage errors cross a pipe
    assert translated(Msg.from_wire(wire), "zh") == translated(exc.message, "zh") and Msg.from_wire(wire) == str(exc)


ALLOWED = {"drill", "torch", "Ctrl", "CUDA", "JSON", "YAML", "UTF", "SQLite", "ISO", "Triton", "FSRS", "MiB"}


def english_left(text: str, home: Path) -> list[str]:
    """The English words of an error once what is shown as it is goes: paths, quoted input, options, commands, lists of names."""
    text = text.replace(str(home), " ")
    text = re.sub(r"'[^']*'|\"[^\"]*\"|--[\w-]+|drill(?: [a-z][\w-]*)*|[\w./-]*[/.][\w./-]+|\w+(?:[-_]\w+)+|：[\w, -]+）", " ", text)
    return [w for w in english_words(text) if w not in ALLOWED | names()]


def names() -> set[str]:
    """Ids shown as they are: topics, tasks, config keys, tracks, question types, a history file's tables."""
    from drill import cli, config
    from drill.bank.schema import TYPES
    from drill.completion import bundled_topics
    from drill.history.transfer import TABLES
    from drill.whiteboard.catalog import TRACKS

    tracks = " ".join(TRACKS).split()
    return set(cli.TASK_NAMES.split(", ")) | set(bundled_topics()) | set(config.KEYS) | set(tracks) | set(TYPES) | set(TABLES)


def broken_bank(home: Path) -> Path:
    path = home / "broken.yaml"
    path.write_text("format_version: 1\nquestions: []\nextra: 1\n", encoding="utf-8")
    return path


def cases(home: Path) -> list[tuple[list[str], int]]:
    (home / "export.json").write_text(json.dumps({"format": "something else"}), encoding="utf-8")
    (home / "rows.json").write_text(json.dumps({"format": "drill-history", "version": 1, "attempts": [{}]}), encoding="utf-8")
    (home / "dir.ipynb").mkdir()
    return [
        (["quiz", "--topic", "mask"], 2),
        (["quiz", "--level", "L4"], 2),
        (["quiz", "--type", "essay"], 2),
        (["quiz", "--resume", "--wrong"], 2),
        (["bank", "show", "nope"], 2),
        (["bank", "list", "--level", "L9"], 2),
        (["bank", "stats", "--markdown", "--json"], 2),
        (["config", "set", "lang", "jp"], 2),
        (["config", "set", "daily-goal", "many"], 2),
        (["config", "get", "colour"], 2),
        (["history", "import", str(home / "missing.json")], 2),
        (["history", "import", str(home / "export.json")], 2),
        (["history", "import", str(home / "rows.json")], 2),
        (["mock", "--track", "attention"], 2),
        (["mistakes", "--since", "yesterday"], 2),
        (["notebook"], 2),
        (["notebook", "nope"], 2),
        (["whiteboard", "nope", "--solution"], 2),
        (["export", "markdown", str(home / "out.md"), "--topic", "nope"], 2),
        (["grade", str(home / "missing.py")], 2),
        (["bank", "validate", str(home / "broken.yaml")], 2),
        (["bank", "validate", str(home / "no-such-bank")], 2),
    ]


def test_every_error_reads_chinese_with_lang_zh_and_english_without(drill_home):
    runner = CliRunner()
    broken_bank(drill_home)
    for args, code in cases(drill_home):
        zh = runner.invoke(app, [*args, "--lang", "zh"])
        en = runner.invoke(app, args)
        assert (zh.exit_code, en.exit_code) == (code, code), (args, zh.output, en.output)
        zh_lines, en_lines = zh.output.strip().splitlines(), en.output.strip().splitlines()
        assert len(zh_lines) == len(en_lines) >= 1, (args, zh.output)
        if args[:2] != ["bank", "validate"]:  # one error, one line, with its prefix; a bank's problems are file:line: lines
            assert len(zh_lines) == 1 and zh_lines[0].startswith("错误：") and en_lines[0].startswith("error: "), (args, zh.output)
        assert all(CJK.search(line) for line in zh_lines), (args, zh.output)
        assert english_left(zh.output, drill_home) == [], (args, zh.output)
        assert not CJK.search(en.output), (args, en.output)


def test_the_checker_would_catch_english(drill_home):
    assert english_left("错误：no question with id 'x' in the loaded banks", drill_home) == ["question", "with", "the", "loaded", "banks"]
    assert english_left(f"错误：{drill_home}/x.json：文件不存在", drill_home) == []


def test_the_configured_language_speaks_the_errors_and_lang_wins(drill_home):
    runner = CliRunner()
    assert runner.invoke(app, ["config", "set", "lang", "zh"]).exit_code == 0
    assert runner.invoke(app, ["bank", "show", "nope"]).output.startswith("错误：已加载的题库里没有")
    assert runner.invoke(app, ["bank", "show", "nope", "--lang", "en"]).output.startswith("error: no question with id 'nope'")


def test_every_command_accepts_lang(drill_home):
    runner = CliRunner()
    for args in (["config", "set", "daily-goal", "7"], ["config", "get", "daily-goal"], ["config", "list"],
                 ["history", "export", str(drill_home / "h.json")], ["history", "import", str(drill_home / "h.json")],
                 ["bank", "list"], ["streak"]):  # fmt: skip
        for flag in (["--lang", "zh"], ["--lang=en"]):
            result = runner.invoke(app, [*args, *flag])
            assert result.exit_code == 0, (args, flag, result.output)
    assert runner.invoke(app, ["config", "get", "daily-goal", "--lang", "zh"]).output.strip() == "7"
    bad = runner.invoke(app, ["config", "get", "daily-goal", "--lang", "jp"])
    assert bad.exit_code == 2 and bad.output.startswith("error: --lang: 'jp' is not one of en, zh"), bad.output


def test_a_command_with_its_own_lang_shows_its_content_in_it(drill_home):
    runner = CliRunner()
    zh = runner.invoke(app, ["bank", "show", "attn-why-sqrt-dk", "--lang", "zh"]).output
    en = runner.invoke(app, ["--lang=en", "bank", "show", "attn-why-sqrt-dk"]).output
    assert len(CJK.findall(zh)) > 20 and not CJK.search(en), (zh, en)


def test_ctrl_c_reads_chinese():
    from drill.text.i18n import t

    assert t("stopped_early", "zh", why=t("stopped_interrupt", "zh"), n=2) == "提前结束（按了 Ctrl-C）：已作答的 2 题都已保存。"
    assert t("stopped_early", "en", why=t("stopped_interrupt", "en"), n=2) == "stopped early (interrupt): the 2 answers given are saved."
