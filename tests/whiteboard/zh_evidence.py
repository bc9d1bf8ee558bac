"""The judge's evidence in Chinese, as the grader tests check it on every report they make: each check's message is
an ``Ev`` whose every msgid (nested ones too) the evidence catalog translates, it survives the judge's pipe as id
and values, and its Chinese keeps no English word."""

from __future__ import annotations

import functools
import json

from drill.grade.report import Check
from drill.text.catalogs import translations
from drill.text.messages import Ev, Msg

from zh_text import english_words


@functools.cache
def catalog() -> dict[str, str]:
    return {k: v for k, v in translations("evidence", "zh")._catalog.items() if k}


def untranslated(message: Msg) -> list[str]:
    """The msgids in ``message`` (itself and nested) that the evidence catalog lacks."""
    own = [message.msgid] if isinstance(message, Ev) and message.msgid not in catalog() else []
    return own + [m for v in message.params.values() if isinstance(v, Msg) for m in untranslated(v)]


def english_evidence(report) -> list[tuple[str, str]]:
    """(check id, what is wrong) for each check whose evidence would not read as Chinese."""
    found = []
    for check in report.checks:
        if not isinstance(check.message, Ev):
            found.append((check.id, f"not an Ev: {check.message!r}"))
            continue
        crossed = Check.from_dict(json.loads(json.dumps(check.to_wire())))
        zh = crossed.text("zh")
        if untranslated(crossed.message) or crossed.message != check.message or english_words(zh):
            found.append((check.id, f"{untranslated(crossed.message)} {english_words(zh)}: {zh}"))
    return found
