"""The judge's evidence as message ids (issue 28): no phrase of English is written in the judge outside an ``Ev``
template (tests/judge_text.py reads every judge module), Babel finds exactly the catalog's msgids in drill's Ev calls,
each translated with the same placeholders and format specs, the committed .mo is the .po compiled, the Chinese
follows the typography rules, and an Ev crosses the judge's pipe as id and values and renders the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import drill
from drill.grade.report import Check
from drill.text.messages import STRUCTURAL, Ev, Msg, translated

from judge_text import chinese, english

from catalog_files import CATALOG, compiled_and_committed

babel = pytest.importorskip("babel")
from babel.messages.extract import extract  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

PACKAGE = Path(drill.__file__).parent
GRADE = PACKAGE / "grade"
# What the judge and the user side tell the user: every check, the shared checks, the battery, the tolerance rule, the
# user side's failures, the parent's words on a judge that died, and --trace (its findings, the tasks' step names,
# stress inputs and pictures). Not here: --bench's roofline (its GPU and datasheet names are proper nouns), and drill's
# own faults (InternalError texts, for --debug).
JUDGE = sorted(
    [*GRADE.glob("tasks/*/task.py"), *GRADE.glob("tasks/*/intermediates.py"), *GRADE.glob("checks/*.py"), *GRADE.glob("user/*.py")]
    + [GRADE / f"{name}.py" for name in ("battery", "context", "tolerance", "precheck", "layouts", "leak", "remote", "isolation",
                                         "tracing", "trace_match", "trace_values")]  # fmt: skip
)
PLACEHOLDER = re.compile(r"\{(\w+)(![rs])?(:[^{}]*)?\}")


def po() -> dict[str, str]:
    with open(CATALOG / "evidence.po", "rb") as file:
        return {m.id: m.string for m in read_po(file) if m.id}


def test_no_phrase_of_english_is_written_in_the_judge_outside_a_message_id():
    found = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in JUDGE for line, text in english(path)]
    assert len(JUDGE) > 60 and found == []


def test_no_chinese_is_written_in_the_judge_either():
    """Chinese lives in the catalog: a judge module that wrote its own (a label, a step's name) would be a second
    place to keep in step, and its language would not follow --lang."""
    found = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in JUDGE for line, text in chinese(path)]
    assert found == []


def test_the_old_regular_expression_translator_is_gone():
    assert not (GRADE / "evidence_zh.py").exists()


def test_the_catalog_holds_exactly_the_evidence_drill_writes_each_translated():
    catalog, used = po(), set(STRUCTURAL)
    for path in PACKAGE.rglob("*.py"):
        with open(path, "rb") as file:
            used |= {msgid for _, msgid, _, _ in extract("python", file, keywords={"Ev": None})}
    assert used - set(catalog) == set(), "add them to evidence.po"
    assert set(catalog) - used == set(), "no longer written: remove them from evidence.po"
    assert [msgid for msgid, msgstr in catalog.items() if not msgstr.strip()] == []
    for msgid, msgstr in catalog.items():  # the same placeholders, conversions and format specs: rendering never fails
        assert sorted(PLACEHOLDER.findall(msgid)) == sorted(PLACEHOLDER.findall(msgstr)), msgid


def test_the_committed_mo_is_the_po_compiled_by_babel():
    fresh, committed = compiled_and_committed("evidence")
    assert len(fresh) > 50 and fresh == committed, "run: pybabel compile -d drill/text/locale -D evidence"


def test_chinese_typography():
    bad = []
    for msgid, msgstr in po().items():
        text = PLACEHOLDER.sub("{}", msgstr)
        if re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", text):
            bad.append(("space between CJK", msgstr))  # no space between two CJK characters
        if re.search(r"[\u4e00-\u9fff][,;:?!]|[,;:?!][\u4e00-\u9fff]|[\u4e00-\u9fff]\(|\)[\u4e00-\u9fff]", text):
            bad.append(("half-width punctuation", msgstr))  # full-width punctuation beside Chinese
        if msgstr.count("`") % 2:
            bad.append(("unpaired backtick", msgstr))
    assert bad == []


def test_evidence_crosses_the_pipe_as_id_and_values_and_renders_in_each_language():
    where = Ev("{label}: {what}", label=Ev("output"), what=Ev("{what}: max error {e:.3g} at {at} (allowed {a:.3g})",
                                                              what="dq", e=0.61234, at=(0, 2), a=2e-5))  # fmt: skip
    wire = json.loads(json.dumps(Check("numerical.fp32", "numerical", "fail", where).to_wire()))
    assert wire["message"] == "output: dq: max error 0.612 at (0, 2) (allowed 2e-05)" and "evidence" in wire
    check = Check.from_dict(wire)
    assert isinstance(check.message, Ev) and check.message == wire["message"]  # the English reads the same on both sides
    assert check.text("zh") == "输出：dq：最大误差 0.612，位于 (0, 2)（允许 2e-05）"
    assert check.text("en") == wire["message"]
    with pytest.raises(ValueError):
        Check.from_dict({**wire, "evidence": "garbled"})  # the CLI calls it a protocol failure
    assert Check.from_dict({k: v for k, v in wire.items() if k != "evidence"}).text("zh") == wire["message"]  # plain text as is


def test_a_sequence_joins_in_each_language_and_an_empty_one_is_empty():
    parts = Ev.seq([Ev("output"), Ev("attention"), "d_model"])
    assert parts == "output; attention; d_model" and translated(parts, "zh") == "输出；注意力；d_model"
    assert Ev.seq([]) == "" and translated(Ev.seq([]), "zh") == ""
    assert isinstance(Msg.from_wire(parts.to_wire()), Ev)


def test_a_zero_d_tensor_crosses_as_its_number_and_a_translation_that_does_not_fit_falls_back_to_english(monkeypatch):
    torch = pytest.importorskip("torch")
    moved = Ev("adding one vector to every key moves the output by {change:.2g}", change=torch.tensor(0.01234))
    crossed = Msg.from_wire(json.loads(json.dumps(moved.to_wire())))
    assert crossed == moved == "adding one vector to every key moves the output by 0.012"
    import drill.text.messages as messages

    monkeypatch.setattr(messages, "_gettext", lambda domain, lang: lambda msgid: "{elsewhere} 不合适的译文")
    assert crossed.render("zh") == str(moved)


def test_a_list_of_names_joins_with_the_enumeration_comma_in_chinese():
    names = Ev.seq([Ev("`{step}`", step="q"), Ev("`{step}`", step=Ev("merged heads"))], "list")
    assert names == "`q`, `merged heads`" and translated(names, "zh") == "`q`、`合并各头`"


def test_chinese_gets_a_space_where_a_value_in_latin_meets_a_chinese_character_and_none_elsewhere():
    on = Ev("on {input}: {message}", input=Ev("scores around 1e3"), message=Ev("`{op}` changes an input in place: the caller's tensor is modified", op="add_"))
    assert translated(on, "zh") == "分数在 1e3 量级时：`add_` 原地修改了输入：调用方的张量被改掉了"
    latin = Ev("{input}: {message}", input="micro-batch", message=Ev("yours is the expected transposed"))
    assert translated(latin, "zh") == "micro-batch 时：你的结果是应为值的转置"
    assert str(latin) == "micro-batch: yours is the expected transposed"  # English is the template as written


def test_the_trace_crosses_the_pipe_as_ids_and_values_and_its_data_stays_data():
    from drill.grade.report import Report

    divergence = {"line": 7, "code": "s = q @ k.T", "expected": Ev("merged heads"), "input": Ev("scores around 1e3"),
                  "message": Ev("{step} expected here: {how}", step=Ev("`{step}`", step=Ev("merged heads")),
                                how=Ev("yours is the expected transposed"))}  # fmt: skip
    rows = [{"line": 7, "code": "s = q @ k.T", "op": "matmul", "shape": [2, 3], "dtype": "float64", "match": None,
             "status": "diverges"}, {"line": 8, "code": "o = s @ v", "op": "matmul", "shape": [2, 3], "dtype": "float64",
                                     "match": "q", "status": "match"}]  # fmt: skip
    pictures = [{"kind": "weights", "title": Ev("attention weights, sample 0, head 0"), "expected": [[0.5, 0.5]], "theirs": [[1.0, 0.0]]}]
    report = Report("sdpa", "cpu", trace=rows, first_divergence=divergence, pictures=pictures)
    wire = json.loads(json.dumps(report.to_wire()))
    assert "message_zh" not in wire["first_divergence"]  # the judge sends ids; the CLI renders
    back = Report.from_wire(wire)
    assert back.first_divergence["message"] == "`merged heads` expected here: yours is the expected transposed"
    assert translated(back.first_divergence["message"], "zh") == "这里应为 `合并各头`：你的结果是应为值的转置"
    assert translated(back.first_divergence["expected"], "zh") == "合并各头" and back.trace[1]["match"] == "q"
    assert back.pictures[0]["expected"] == [[0.5, 0.5]] and translated(back.pictures[0]["title"], "zh") == "注意力权重：样本 0，第 0 个头"
    shown = back.to_dict()  # --json: each word in English, in Chinese, and as id and values
    assert shown["first_divergence"]["input_zh"] == "分数在 1e3 量级" and shown["trace"][0]["match_zh"] is None
    assert shown["pictures"][0]["title_zh"] == "注意力权重：样本 0，第 0 个头" and shown["pictures"][0]["expected"] == [[0.5, 0.5]]
    assert Msg.from_wire(shown["first_divergence"]["message_evidence"]) == divergence["message"]
