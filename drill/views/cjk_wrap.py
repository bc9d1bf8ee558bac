"""Line breaking that Chinese text needs, taught to rich's word wrapper.

rich wraps at white space only, so a run of Chinese (which has no spaces) is one long "word":
it jumps to the next line whole and leaves the previous line half empty (``从原始 HTML`` alone
on a line). Chinese may break between any two characters, except that closing punctuation
(``，。、）``) never starts a line and opening punctuation (``（《“``) never ends one. rich
finds words with one regular expression, ``rich._wrap.re_word``; :func:`install` swaps it for
one that makes each Chinese character a word of its own, with the punctuation attached. Every
character still belongs to exactly one word, so no text can be lost (tests/test_cjk_wrap.py).
"""

from __future__ import annotations

import re

CJK = "\u2e80-\u2fdf\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
OPENING = "（《「『【〔〈“‘"
CLOSING = "，。、；：？！）》」』】〕〉”’…％·"
WORD = re.compile(
    rf"\s*(?:[{OPENING}]*(?:[{CJK}]|[^\s{CJK}{OPENING}{CLOSING}]+)[{CLOSING}]*|\S)\s*"
)


def install() -> None:
    """Make rich break lines between Chinese characters (idempotent)."""
    import rich._wrap

    rich._wrap.re_word = WORD
