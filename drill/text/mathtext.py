"""Bank text for each place it is shown: LaTeX math as Unicode in the terminal, MathJax for Anki.

Bank text is Markdown with ``$…$`` / ``$$…$$`` LaTeX. A terminal cannot typeset it, so
:func:`plain` and :func:`markdown` turn each formula into readable Unicode
(``$QK^\\top/\\sqrt{d_k}$`` → ``QKᵀ/√d_k``): pylatexenc parses the formula and supplies
the symbol table (``\\cdot`` → ``·``, ``\\mathbb{R}`` → ``ℝ``); scripts, roots and fractions
are laid out here, because a plain-text converter flattens ``x^{-2i/d}`` into the
ambiguous ``x^-2i/d``. Subscripts stay ``_k`` (what people type, and what key-point
keywords match); superscripts become ``²``, ``ᵀ``, ``⁻¹`` when Unicode has every character.

Every renderer also closes the gaps that folded lines and Markdown soft line breaks leave
in Chinese text (``均值 0、 方差 1`` → ``均值 0、方差 1``). pylatexenc (~15 ms) is imported on the first
formula only, so commands that show no bank text never pay for it.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|\$(?P<inline>[^$\n]+(?:\n(?!\s*\n)[^$\n]*)*?)\$", re.S)
_CODE = re.compile(r"(`+)(?:.+?)\1", re.S)  # Markdown code spans keep their dollar signs
_CODE_HELD = "\ue005"

_HAN = "\u2e80-\u2fdf\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_PUNCT = "\u3000-\u3003\u3008-\u3011\u3014-\u301f\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f\u2026"  # 、。《》【】（），：；？！…
_BREAK = r"[ \t]*(?:\n[ \t]*)?"  # spaces, or a Markdown soft line break (which renders as a space)
_KEPT_SPACE = "\ue004"
_NOT_A_BLOCK = rf"(?![\s#>|]|[-*+][ \t{_KEPT_SPACE}]|\d+[.)][ \t{_KEPT_SPACE}]|```|~~~|-{{2,}}|\*{{3,}}|_{{3,}}|={{2,}})"  # no list, heading, quote, table, fence, rule
_LIST_MARKER = re.compile(r"^([ \t]*(?:[-*+]|\d+[.)]))[ \t]+", re.M)  # "3. （可选）" stays a list item
_GAP = r"(?:[ \t]+(?:\n[ \t]*)?|\n[ \t]*)"  # _BREAK that is really there: an empty one would be a no-op match at every position
_CJK_GAP = re.compile(
    r"(?=[ \t\n])(?:"  # every gap starts with a space or a newline: other positions fail at once (9x faster)
    rf"(?<=[{_HAN}{_CJK_PUNCT}]){_GAP}(?=\*{{0,2}}[{_HAN}{_CJK_PUNCT}])"  # 今日 目标 → 今日目标, 文字 **粗体**
    rf"|(?<=[{_CJK_PUNCT}])(?:[ \t]+|[ \t]*\n[ \t]*{_NOT_A_BLOCK})(?=\S)"  # 0、 方差 → 0、方差
    rf"|(?<=\S){_GAP}(?=[{_CJK_PUNCT}])"  # 形状 （B） → 形状（B）
    r")"
)
_ANY_CJK = re.compile(f"[{_HAN}{_CJK_PUNCT}]")
_GAP_AFTER_EMPHASIS = re.compile(rf"(?<=[{_HAN}])(\*{{1,2}}){_BREAK}(?=[{_HAN}{_CJK_PUNCT}])")  # **粗体** 文字
# "**要点：** 正文": the space cannot go while the colon is inside the bold (a closing ** after
# punctuation needs a space or punctuation after it), so the colon moves out first: "**要点**：正文".
_PUNCT_IN_EMPHASIS = re.compile(rf"([{_CJK_PUNCT}])(?<=[^\s*][{_CJK_PUNCT}])(\*{{1,2}})(?=[ \t])")  # the punctuation first: a fast scan

# A ``**…**`` or ``*…*`` span within one paragraph; ``\*`` (an escaped star, as in a rendered formula) is no delimiter.
_EMPHASIS = re.compile(r"(?<![\\*])(\*\*|\*)(?![\s*])((?:(?!\n[ \t]*\n).)+?)(?<![\s\\*])\1(?!\*)", re.S)

_SUPERSCRIPT = dict(
    zip(
        "0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ⊤",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᶲᵡᵀ",
    )
)
_SUB_OPEN, _SUB_CLOSE = "\ue000", "\ue001"  # a subscript, laid out once what follows it is known
_SUB = re.compile(f"{_SUB_OPEN}([^{_SUB_OPEN}{_SUB_CLOSE}]*){_SUB_CLOSE}")
_FONT_MACROS = {"mathrm", "text", "textrm", "mathit", "textit", "mathbf", "textbf", "boldsymbol", "bm", "mathsf", "mathtt", "texttt",
                "operatorname", "mathrel", "mathbin", "mathop", "mathord", "emph", "mbox", "hbox", "displaystyle", "textstyle"}  # fmt: skip
_BINOMIALS = ("binom", "dbinom", "tbinom")
_ATOM = re.compile(f"^√?[\\w.′']+(?:{_SUB_OPEN}\\w+{_SUB_CLOSE})?$")  # needs no parentheses after √ or around a fraction's part
_OPENING = {"lceil", "lfloor", "langle", "lVert", "lvert", "left", "big", "Big", "bigl", "Bigl"}
_LOPSIDED = re.compile(r"(?<=[^\s(\[{])([·×≤≥≈→←⇒⊙∈])(?=[ \t])|(?<=[ \t])([·×≤≥≈→←⇒⊙∈])(?=[^\s)\]}])")  # `q\cdot k`: one side spaced
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>#|~])")


def join_cjk(text: str) -> str:
    """Drop the spaces a line join leaves between Chinese characters or around Chinese punctuation."""
    cjk = _ANY_CJK.search(text) is not None  # the three CJK rules all need a CJK character: English skips them
    text = _LIST_MARKER.sub(rf"\1{_KEPT_SPACE}", _PUNCT_IN_EMPHASIS.sub(r"\2\1", text) if cjk else text)
    if cjk:
        text = _CJK_GAP.sub("", _GAP_AFTER_EMPHASIS.sub(r"\1", text))
    return tidy_emphasis(text.replace(_KEPT_SPACE, " "))


def _punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"  # CommonMark's (and markdown-it's) punctuation


def _opens_or_closes(ch: str) -> bool:
    """A neighbour that lets a delimiter next to punctuation still open or close: space, punctuation, an edge."""
    return not ch or ch.isspace() or _punct(ch)


def _tidy_pair(m: re.Match) -> str:
    """``**要点。**正文`` → ``**要点**。正文``: punctuation at an edge of the span moves outside it when
    the delimiter there could not act (CommonMark: ``**`` after punctuation closes only before a
    space or punctuation, and opens after punctuation only where a space or punctuation precedes it).
    Bold punctuation looks like plain punctuation, so nothing visible is lost."""
    mark, body = m.group(1), m.group(2)
    before, after = m.string[m.start() - 1 : m.start()], m.string[m.end() : m.end() + 1]
    lead = trail = ""
    if not _opens_or_closes(before):
        while body and _punct(body[0]):
            lead, body = lead + body[0], body[1:]
    if not _opens_or_closes(after):
        while body and _punct(body[-1]):
            body, trail = body[:-1], body[-1] + trail
    return f"{lead}{mark}{body}{mark}{trail}" if body.strip() else m.group(0)


_STAR_BY_PUNCT = re.compile(r"\*(?:[^\w\s*]|_)|(?:[^\w\s*]|_)\*")  # a delimiter touching punctuation: what _tidy_pair moves


def tidy_emphasis(text: str) -> str:
    """Every ``**…**`` / ``*…*`` pair placed where CommonMark parses it (see :func:`_tidy_pair`)."""
    if "*" not in text or not _STAR_BY_PUNCT.search(text):  # no span edge is punctuation: nothing to move
        return text
    return _EMPHASIS.sub(_tidy_pair, text)


def _outside_code(text: str, fn) -> str:
    """Apply ``fn`` to Markdown ``text`` with its code spans and blocks held out (each seen by ``fn`` as one symbol)."""
    if "`" not in text:
        return fn(text)
    spans: list[str] = []

    def hold(m: re.Match) -> str:
        spans.append(m.group(0))
        return f"{_CODE_HELD}{len(spans) - 1}{_CODE_HELD}"

    done = fn(_CODE.sub(hold, text))
    return re.sub(f"{_CODE_HELD}(\\d+){_CODE_HELD}", lambda m: spans[int(m.group(1))], done)


def _each_formula(text: str, render) -> str:
    """``render(formula, display)`` for every ``$…$`` and ``$$…$$`` outside code, then the CJK join."""

    def formulas(part: str) -> str:
        return join_cjk(_MATH.sub(lambda m: render(m.group("display") or m.group("inline"), m.group("display") is not None), part))

    return _outside_code(text, formulas)


def plain(text: str) -> str:
    """Text shown as is (choices, key points, pitfalls, answers in a verdict): formulas as Unicode."""
    return _each_formula(text, lambda tex, display: to_unicode(tex))


def markdown(text: str) -> str:
    """Markdown rendered by rich: formulas as Unicode, escaped so ``*`` or ``_`` in them stay literal."""
    return _each_formula(text, lambda tex, display: _MARKDOWN_SPECIALS.sub(r"\\\1", to_unicode(tex)))


@lru_cache(maxsize=1)
def _parser():
    """The parser rich's Markdown uses, so what is checked is what a terminal shows."""
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def _inline_tokens(text: str) -> list:
    """Bank text as markdown-it's inline tokens, formulas already Unicode."""
    return [child for token in _parser().parseInline(markdown(text)) for child in token.children or []]


_STYLES = {"strong": "bold", "em": "italic", "s": "strike"}


def inline(text: str) -> str:
    """One line of bank text (a choice, key point or pitfall) as rich markup: bold, italic and code
    spans styled, formulas as Unicode, never a Markdown mark shown as such."""
    from rich.markup import escape

    out = []
    for token in _inline_tokens(text):
        kind = token.type.rsplit("_", 1)
        if token.type == "code_inline":
            out.append(f"[bold cyan]{escape(token.content)}[/]")
        elif kind[0] in _STYLES and kind[-1] in ("open", "close"):
            out.append(f"[{_STYLES[kind[0]]}]" if kind[-1] == "open" else f"[/{_STYLES[kind[0]]}]")
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
        else:
            out.append(escape(token.content))
    return "".join(out)


def screen_text(text: str, block: bool = True) -> str:
    """The characters a reader sees of bank text, code left out: ``block`` for prompts and answers
    (rendered as Markdown blocks), else one line as :func:`inline` shows it. Checked by the validator
    for Markdown or LaTeX that did not render."""
    tokens = _parser().parse(markdown(text)) if block else _parser().parseInline(markdown(text))
    seen: list[str] = []

    def walk(tokens) -> None:
        for token in tokens:
            if token.children:
                walk(token.children)
            elif token.type in ("text", "html_inline", "html_block"):
                seen.append(token.content)
            elif token.type in ("softbreak", "hardbreak"):
                seen.append(" ")

    walk(tokens)
    return "".join(seen)


def tex_markdown(text: str) -> str:
    """Markdown that keeps its ``$…$`` formulas (the printable cheat sheet), with the CJK join."""
    return _outside_code(text, join_cjk)


def mathjax_html(text: str, render_markdown) -> str:
    """HTML of Markdown ``text`` with formulas as MathJax ``\\(…\\)`` / ``\\[…\\]``, as Anki shows them.

    Formulas are swapped for placeholders before ``render_markdown`` runs, so Markdown
    never eats their backslashes, underscores or asterisks.
    """
    formulas: list[str] = []

    def hold(tex: str, display: bool) -> str:
        formulas.append(f"\\[{tex.strip()}\\]" if display else f"\\({tex.strip()}\\)")
        return f"\ue002{len(formulas) - 1}\ue003"

    rendered = render_markdown(_each_formula(text, hold))
    return re.sub("\ue002(\\d+)\ue003", lambda m: html.escape(formulas[int(m.group(1))], quote=False), rendered)


@lru_cache(maxsize=4096)
def to_unicode(tex: str) -> str:
    """One LaTeX formula (without its dollar signs) as readable Unicode text."""
    from pylatexenc.latexwalker import LatexWalker

    nodes, _, _ = LatexWalker(tex, latex_context=_parse_context(), tolerant_parsing=True).get_latex_nodes()
    text = _lay_out_subscripts(_Renderer().nodes(nodes or []))
    text = _LOPSIDED.sub(lambda m: f" {m.group(1) or m.group(2)} ", text)
    text = re.sub(r"[ \t]+(?=[⌉⌋⟩])", "", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _lay_out_subscripts(text: str) -> str:
    """``d_k``; ``d_model`` unless a letter follows (then ``s_(ii)s_(jj)``); ``_(i=1)`` for anything else."""

    def one(m: re.Match) -> str:
        body, rest = m.group(1), m.string[m.end() : m.end() + 1]
        if len(body) == 1 or (re.fullmatch(r"\w+", body) and not re.match(r"\w", rest)):
            return f"_{body}"
        return f"_({body})"

    while _SUB.search(text):
        text = _SUB.sub(one, text)
    return text


def _superscript(body: str) -> str:
    tight = body.replace(" ", "")  # e^{1 - 3} → e¹⁻³
    if tight and all(ch in _SUPERSCRIPT for ch in tight):
        return "".join(_SUPERSCRIPT[ch] for ch in tight)
    return f"^{body}" if len(body) == 1 else f"^({body})"


def _wrapped(text: str) -> str:
    return text if _ATOM.match(text) else f"({text})"


@lru_cache(maxsize=1)
def _parse_context():
    """pylatexenc's macros plus the argument counts of amsmath ones it lacks (``\\binom{n}{k}``)."""
    from pylatexenc.latexwalker import get_default_latex_context_db
    from pylatexenc.macrospec import MacroSpec

    context = get_default_latex_context_db()
    context.add_context_category("drill", macros=[MacroSpec(name, "{{") for name in _BINOMIALS], prepend=True)
    return context


@lru_cache(maxsize=1)
def _latex2text():
    from pylatexenc.latex2text import LatexNodes2Text, get_default_latex_context_db

    return LatexNodes2Text(math_mode="text"), get_default_latex_context_db()


class _Renderer:
    """Walks pylatexenc's nodes; ``^``/``_`` are plain characters to pylatexenc, so scripts are found here."""

    def nodes(self, nodes) -> str:
        out: list[str] = []
        pending: str | None = None  # "^" or "_" whose argument is the next node
        for node in nodes:
            if pending is not None and self._is_chars(node) and not node.chars.strip():
                continue  # "x^ {2}": the argument is the next node with something in it
            if pending is not None:
                body = self.node(node)
                out += [self._script(pending, body), body[len(body.rstrip()) :]]  # keep the space after `^\top x`
                pending = None
                continue
            if self._is_chars(node):
                text, pending = self._chars(node.chars)
                out.append(text)
            else:
                out.append(self.node(node))
        if pending is not None:
            out.append(pending)
        return "".join(out)

    @staticmethod
    def _is_chars(node) -> bool:
        return type(node).__name__ == "LatexCharsNode"

    def _chars(self, chars: str) -> tuple[str, str | None]:
        """Scripts whose argument is the next character; a trailing ``^``/``_`` waits for the next node."""
        out, i = [], 0
        while i < len(chars):
            ch = chars[i]
            if ch in "^_":
                j = i + 1
                while j < len(chars) and chars[j] in " \t":
                    j += 1
                if j == len(chars):
                    return "".join(out), ch
                out.append(self._script(ch, chars[j]))
                i = j + 1
            else:
                out.append(ch)
                i += 1
        return "".join(out), None

    @staticmethod
    def _script(kind: str, body: str) -> str:
        body = body.strip()
        return _superscript(body) if kind == "^" else f"{_SUB_OPEN}{body}{_SUB_CLOSE}"

    def node(self, node) -> str:
        kind = type(node).__name__
        if kind == "LatexCharsNode":
            return self._chars(node.chars)[0]
        if kind == "LatexGroupNode":
            return self.nodes(node.nodelist)
        if kind == "LatexMacroNode":
            spaced = not self._args(node) and node.macroname not in _OPENING  # `\le i`: keep the source's space
            return self._macro(node) + (node.macro_post_space if spaced else "")
        if kind == "LatexMathNode":
            return self.nodes(node.nodelist)
        if kind == "LatexCommentNode":
            return "%" + node.comment  # "$40%$": bank text means a percent sign, never a TeX comment
        l2t, _ = _latex2text()
        return l2t.node_to_text(node)

    def _args(self, node) -> list:
        return [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]

    def _macro(self, node) -> str:
        name, args = node.macroname, self._args(node)
        if name == "sqrt" and args:
            return "√" + _wrapped(self.node(args[-1]).strip())
        if name in ("frac", "dfrac", "tfrac") and len(args) == 2:
            num, den = (self.node(a).strip() for a in args)
            return f"{_wrapped(num)}/{_wrapped(den)}"
        if name in _BINOMIALS and len(args) == 2:
            n, k = (self.node(a).strip() for a in args)
            return f"C({n}, {k})"
        if name in _FONT_MACROS:
            return "".join(self.node(a) for a in args)
        if name in ("left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "middle"):
            return ""
        if name in ("bmod", "mod"):
            return " mod "
        if name == "top":
            return "⊤"
        l2t, context = _latex2text()
        if context.get_macro_spec(name) is None:
            return name + "".join(self.node(a) for a in args)  # unknown to pylatexenc: keep its name, never drop it
        return l2t.node_to_text(node)
