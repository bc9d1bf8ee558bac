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

from judge_text import english

from catalog_files import CATALOG, compiled_and_committed

babel = pytest.importorskip("babel")
from babel.messages.extract import extract  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

PACKAGE = Path(drill.__file__).parent
GRADE = PACKAGE / "grade"
# What the judge and the user side tell the user: every check, the shared checks, the battery, the tolerance rule, the
# user side's failures and the parent's words on a judge that died. Not here: the trace (tracing.py, trace_match.py,
# trace_values.py and the tasks' intermediates.py write each row natively in both languages), --bench's roofline (its
# GPU and datasheet names are proper nouns), and drill's own faults (InternalError texts, for --debug).
JUDGE = sorted(
    [*GRADE.glob("tasks/*/task.py"), *GRADE.glob("checks/*.py"), *GRADE.glob("user/*.py")]
    + [GRADE / f"{name}.py" for name in ("battery", "context", "tolerance", "precheck", "layouts", "leak", "remote", "isolation")]
)
PLACEHOLDER = re.compile(r"\{(\w+)(![rs])?(:[^{}]*)?\}")


def po() -> dict[str, str]:
    with open(CATALOG / "evidence.po", "rb") as file:
        return {m.id: m.string for m in read_po(file) if m.id}


def test_no_phrase_of_english_is_written_in_the_judge_outside_a_message_id():
    found = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in JUDGE for line, text in english(path)]
    assert len(JUDGE) > 60 and found == []


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
