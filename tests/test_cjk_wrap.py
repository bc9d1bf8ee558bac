"""Chinese text wraps between characters, never before closing punctuation, and loses nothing."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

import drill.views.console  # noqa: F401  (installs the wrapper, as every view does)
from drill.views.cjk_wrap import CLOSING, OPENING


def lines(text: str, width: int) -> list[str]:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(text, markup=False, highlight=False)
    return buffer.getvalue().rstrip("\n").split("\n")


def test_a_chinese_run_fills_the_line_instead_of_jumping_to_the_next():
    got = lines("从原始 HTML 到可训练的文本需要很多步骤：去重、过滤、语言识别和质量打分等等。", 30)
    assert got[0].rstrip() == "从原始 HTML 到可训练的文本需要"  # 30 cells: was "从原始 HTML" alone
    assert all(cell_len(line) <= 30 for line in got)


def test_english_still_breaks_at_spaces_only():
    assert lines("English text still wraps at spaces like it always did", 20) == ["English text still ", "wraps at spaces like", "it always did"]


HAN = "的是了在有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经"
text = st.text(alphabet=st.sampled_from([*HAN, *"，。、；：？！（）《》", "\u201c", "\u201d", *"ab c1 "]), max_size=120)


@settings(max_examples=200, deadline=None)
@given(text, st.integers(min_value=8, max_value=40))
def test_wrapping_loses_nothing_and_keeps_punctuation_rules(sample, width):
    got = lines(sample, width)
    assert "".join(got).replace(" ", "") == sample.replace(" ", "")
    if re.search(rf"[{re.escape(OPENING + CLOSING)}]{{2}}|\s[{re.escape(CLOSING)}]|[{re.escape(OPENING)}]\s", sample):
        return  # a run of punctuation can outgrow the line (folded like any over-long word); a space is a break point
    for previous, line in zip(got, got[1:]):
        if previous.strip():
            assert line[:1] not in CLOSING, (previous, line)  # 。，） never start a line
            assert previous.rstrip()[-1:] not in OPENING or len(previous.strip()) == 1, (previous, line)
