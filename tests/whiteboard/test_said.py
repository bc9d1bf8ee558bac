"""What the user side says about a failure crosses as id and values (drill.grade.remote.said): a well-formed message
comes back as the Ev it was, rendered in Chinese from the catalog; anything the user's process could forge to run
code in a format field, blow up the text or smuggle another domain comes back as plain text, shown as it is."""

from __future__ import annotations

import json

import pytest

from drill.grade.remote import said
from drill.text.messages import Ev, Msg


def wire(message: Msg) -> dict:
    return json.loads(json.dumps(message.to_wire()))


def test_a_message_of_ours_comes_back_as_it_was():
    sent = Ev("raised {type}: {text}", type="ValueError", text="shapes (2, 3) and (4,) differ")
    back = said(wire(sent))
    assert type(back) is Ev and back == sent and back.msgid == sent.msgid and back.params == sent.params
    assert back.render("zh").startswith("抛出了 ValueError")


@pytest.mark.parametrize("forged", [
    {"msgid": "{x.__class__}", "params": {"x": 1}, "domain": "evidence"},  # attribute lookup in a field
    {"msgid": "{x[0]}", "params": {"x": [1]}, "domain": "evidence"},  # item lookup
    {"msgid": "{x:>999999999}", "params": {"x": 1}, "domain": "evidence"},  # a width that eats memory
    {"msgid": "{x}", "params": {"x": 1, "y": 2}, "domain": "evidence"},  # a value no field shows
    {"msgid": "{x}", "params": {"x": {"msgid": "{y}", "params": {"y": {"$t": 0}}, "domain": "evidence"}}, "domain": "evidence"},
    {"msgid": "unknown task {task!r}", "params": {"task": "x"}},  # the errors' domain: not the user side's to speak
    {"msgid": "{x}", "params": {"x": "\ud800"}, "domain": "evidence"},  # a lone surrogate
    "raised ValueError: a plain string",
])  # fmt: skip
def test_anything_else_is_shown_as_its_text(forged):
    back = said(forged)
    assert type(back) is Ev and back.msgid == "{name}" and back == str(forged).encode("utf-8", "replace").decode("utf-8")


def test_a_deep_nest_is_text_too():
    deep: object = "x"
    for _ in range(20):
        deep = {"msgid": "{a}", "params": {"a": deep}, "domain": "evidence"}
    assert said(deep).msgid == "{name}"
