"""Bank text as each place shows it: Unicode math in the terminal, MathJax for Anki, closed Chinese line joins."""

from __future__ import annotations

import io
import re

import pytest
from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Markdown

from drill.bank.load import load_bundled
from drill.bank.schema import ChoiceQuestion
from drill.text.mathtext import inline, join_cjk, markdown, mathjax_html, plain, screen_text, tex_markdown, tidy_emphasis, to_unicode


@pytest.mark.parametrize(
    ("tex", "shown"),
    [
        (r"q \cdot k", "q · k"), (r"\sqrt{d_k}", "√d_k"), (r"QK^\top", "QKᵀ"), (r"O(T^2)", "O(T²)"), (r"\mathrm{softmax}(x)", "softmax(x)"),
        (r"\mathrm{softmax}(QK^\top/\sqrt{d_k})V", "softmax(QKᵀ/√d_k)V"), (r"10000^{-2i/d}", "10000^(-2i/d)"), (r"2^{30}", "2³⁰"),
        (r"e^{m_{old} - m_{new}}", "e^(m_old - m_new)"), (r"\frac{a+b}{2}", "(a+b)/2"), (r"\frac{1}{\sqrt{d}}", "1/√d"),
        (r"\sqrt{s_{ii}s_{jj}}", "√(s_(ii)s_jj)"), (r"j \le i", "j ≤ i"), (r"q\cdot k", "q · k"), (r"\mathrm{diag}(\ell)^{-1}", "diag(ℓ)⁻¹"),
        (r"i \bmod W", "i mod W"), (r"\lceil M/4d \rceil", "⌈M/4d⌉"), (r"1{,}024", "1,024"), (r"\text{seq\_len}", "seq_len"),
        (r"\sum_{i=1}^{d_k} q_i k_i", "∑_(i=1)^(d_k) q_i k_i"), (r"W_K^\top x_j", "W_Kᵀ x_j"), (r"\unknownmacro", "unknownmacro"),
        (r"e^{3 - 5}", "e³⁻⁵"), (r"K_{\le t}", "K_(≤ t)"), (r"e^{2.7}", "e^(2.7)"), (r"1 - \binom{18}{10}", "1 - C(18, 10)"),
    ],
)  # fmt: skip
def test_formulas_become_readable_unicode(tex, shown):
    assert to_unicode(tex) == shown


def test_text_around_formulas_and_code():
    assert plain(r"the scale $1/\sqrt{d_k}$ and `$HOME`") == "the scale 1/√d_k and `$HOME`"  # code keeps its dollars
    assert markdown(r"$a*b_c$ is *small*") == r"a\*b\_c is *small*"  # rich shows a*b_c, not an emphasis
    assert plain("no math, 50 $ each") == "no math, 50 $ each"


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("均值 0、 方差 1", "均值 0、方差 1"), ("今日 目标已完成", "今日目标已完成"), ("点积方差\n随 d_k 增长", "点积方差随 d_k 增长"),
        ("完全不变 （不计 bias）", "完全不变（不计 bias）"), ("左右；\n`q @ k`", "左右；`q @ k`"), ("**要点：** 正文", "**要点**：正文"),
        ("的 **粗体** 文字", "的**粗体**文字"),
        # kept: spaces between Chinese and Latin, paragraphs, list items, English
        ("attention 是 key", "attention 是 key"), ("第一段。\n\n第二段", "第一段。\n\n第二段"), ("要点：\n- 第一", "要点：\n- 第一"),
        ("左右；\n3. （可选）", "左右；\n3. （可选）"), ("one, two", "one, two"),
    ],
)  # fmt: skip
def test_chinese_line_joins_are_closed(text, joined):
    assert join_cjk(text) == joined


def test_anki_gets_mathjax_the_cheat_sheet_keeps_tex():
    html = mathjax_html(r"Cost $O(T^2 d)$ with $a_i * b_i < c$" "\n\n$$x_{i}^2$$", MarkdownIt("commonmark").render)
    assert r"\(O(T^2 d)\)" in html and r"\(a_i * b_i &lt; c\)" in html and r"\[x_{i}^2\]" in html
    assert "<em>" not in html and "$" not in html
    assert tex_markdown("$T^2$ 的 代价") == "$T^2$ 的代价"


_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_PUNCT = "、。，：；！？（）【】《》"
_CJK_SPACE = re.compile(rf"[{_HAN}{_PUNCT}][ \t]+[{_HAN}{_PUNCT}]|[{_PUNCT}][ \t]+\S|\S[ \t]+[{_PUNCT}]")
_UNRENDERED = re.compile(r"\*\*|__|`|\$|\\[A-Za-z]+|[{}]")  # Markdown or LaTeX source on screen
_FENCED = re.compile(r"^```.*?^```", re.M | re.S)
_TABLE_ROW = re.compile(r"^\|.*\|[ \t]*$", re.M)
_BULLET = re.compile(r"^\s*(?:•|\d+)\s")  # how rich starts a list item


def _shown(markdown_text: str) -> list[str]:
    """The prose rich prints for rendered bank Markdown: code stands in as CODE, table cells come one by one."""
    source = re.sub(r"`[^`]*`", "CODE", _FENCED.sub("", markdown(markdown_text)))
    cells = [cell.strip() for row in _TABLE_ROW.findall(source) for cell in row.strip("| \t").split("|")]
    console = Console(file=io.StringIO(), width=100, highlight=False, color_system=None)
    console.print(Markdown(_TABLE_ROW.sub("", source)))
    return [_BULLET.sub("", line).strip() for line in console.file.getvalue().splitlines()] + cells


def _bundled_texts():
    for q in load_bundled().questions.values():
        for lang in ("en", "zh"):
            yield q.id, lang, "markdown", q.prompt.get(lang)
            yield q.id, lang, "markdown", q.answer.get(lang)
            plain_texts = [kp.get(lang) for kp in q.key_points] + [p.get(lang) for p in q.pitfalls]
            if isinstance(q, ChoiceQuestion):
                plain_texts += [c.get(lang) for c in q.choices]
            for text in plain_texts:
                yield q.id, lang, "plain", text


def _line(text: str) -> str:
    """A choice, key point or pitfall as the quiz prints it (rich markup from :func:`inline`), code as CODE."""
    from rich.text import Text

    return Text.from_markup(inline(re.sub(r"`[^`]*`", "CODE", text))).plain


def test_every_bundled_text_reaches_the_terminal_without_markup_or_split_chinese():
    """Every question, choice, answer, key point and pitfall in both languages, as the terminal shows it: no `**`,
    `__`, unpaired backtick, `$`, LaTeX command or brace, and no gap inside Chinese. Includes every topic file in
    questions/, whoever wrote it."""
    problems = []
    for qid, lang, kind, text in _bundled_texts():
        lines = _shown(text) if kind == "markdown" else [_line(text)]
        for line in lines:
            if _UNRENDERED.search(line) or _CJK_SPACE.search(line):
                problems.append(f"{qid} [{lang}] {line[:120]!r}")
    assert not problems, f"{len(problems)} lines:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize(
    ("source", "bold"),
    [("**改写网页。**WRAP 把网页改写", "改写网页"), ("**要点：**正文", "要点"), ("文字**（引用）**后面", "引用"), ("**选 A。**beam search 保留", "选 A"),
     ("- **给小模型的教科书式数据。**phi-1（1.3B）", "给小模型的教科书式数据"), ("Plain **bold.** English", "bold.")],
)  # fmt: skip
def test_bold_that_ends_in_chinese_punctuation_is_still_bold(source, bold):
    """CommonMark does not close `**` after punctuation when a letter follows; the renderer moves the punctuation out."""
    tokens = MarkdownIt().parse(markdown(source))
    inline_tokens = [t for block in tokens for t in (block.children or [])]
    types = [t.type for t in inline_tokens]
    assert "strong_open" in types and "strong_close" in types, types
    inside = inline_tokens[types.index("strong_open") + 1]
    assert inside.content == bold
    assert "**" not in screen_text(source) and "**" not in _line(source)


def test_emphasis_tidy_leaves_what_already_parses_and_escaped_stars_alone():
    for text in ("**bold** text", r"a \* b \* c", "2 * 3 * 4", "**粗体**。后文", "x **y** z"):
        assert tidy_emphasis(text) == text
    assert tidy_emphasis("**FP8。**block 量化") == "**FP8**。block 量化"


def test_one_line_texts_render_bold_italic_and_code_as_styles():
    assert inline("**要点。**正文 `key_padding_mask` $x^2$ *it*") == "[bold]要点[/bold]。正文 [bold cyan]key_padding_mask[/] x² [italic]it[/italic]"
    assert inline("a [b] c") == "a \\[b] c"  # rich markup in bank text stays text
