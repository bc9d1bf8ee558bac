"""Messages as ids with named parameters (gettext's convention: the id is the English template), rendered at the edge
in the user's language from the catalogs ``locale/<lang>/LC_MESSAGES/<domain>.po`` (compiled with Babel): errors and
screens in the ``messages`` domain (:class:`Msg`), the judge's evidence in the ``evidence`` domain (:class:`Ev`).
A message is the English text itself (a ``str``), so logs, tests and ``str(exc)`` read it as before; a catalog
loads only when a message is printed in another language."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

NAME = "{name}"  # a value on its own, where a message is wanted
JOINS = {"; ": "{a}; {b}", ", ": "{a}, {b}", "list": "{first}, {then}"}  # "list": names in a row (in Chinese 、)
STRUCTURAL = (NAME, *JOINS.values())  # msgids every catalog holds though no call names them literally


class Msg(str):
    """A message: English text whose ``msgid`` and ``params`` let it be rendered again in another language.
    A parameter that is itself a Msg (an English phrase) is rendered too; any other (a name, a number, a shape, the
    text of a Python exception) goes in as it is."""

    DOMAIN = "messages"

    def __new__(cls, msgid: str, **params: object) -> "Msg":
        text = super().__new__(cls, msgid.format(**params) if params else msgid)
        text.msgid, text.params = msgid, params
        return text

    def render(self, lang: str) -> str:
        template = _gettext(self.DOMAIN, lang)(self.msgid)
        if not self.params:
            return template
        values = {k: _rendered(v, lang) for k, v in self.params.items()}
        try:
            return template.format(**values) if lang == "en" else _spaced(template, values)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):  # a translation whose fields do not fit
            return str(self)

    def to_wire(self) -> dict:
        """JSON for a message that crosses a process boundary (the judge's errors and evidence)."""
        wire = {"msgid": self.msgid, "params": {k: _wire(v) for k, v in self.params.items()}}
        return {**wire, "domain": self.DOMAIN} if self.DOMAIN != Msg.DOMAIN else wire

    @classmethod
    def from_wire(cls, wire: object) -> "Msg":
        """The message of :meth:`to_wire`; anything else (a stray or garbled event) as its text, untranslated."""
        try:
            kind = Ev if wire.get("domain") == Ev.DOMAIN else Msg
            params = {k: _unwire(v) for k, v in (wire.get("params") or {}).items()}
            return kind(str(wire["msgid"]), **params)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            return cls(str(wire))

    @classmethod
    def seq(cls, parts: Iterable[object], sep: str = "; ") -> "Msg":
        """``parts`` one after another, ``sep`` (``"; "``, ``", "`` or ``"list"``: names in a row, written ", " in
        English) between them as each language writes it."""
        parts = list(parts)
        if not parts:
            return cls(NAME, name="")
        joined = parts[-1] if isinstance(parts[-1], Msg) else cls(NAME, name=parts[-1])
        import string  # here, not at start-up: most commands never join

        template = JOINS[sep]
        first, then = (field for _, field, _, _ in string.Formatter().parse(template) if field)
        for part in reversed(parts[:-1]):
            joined = cls(template, **{first: part, then: joined})
        return joined


class Ev(Msg):
    """A piece of the judge's evidence: the check's finding as an id and its values (numbers, shapes, indices, code
    names), never a sentence; ``drill grade`` renders it in the user's language."""

    DOMAIN = "evidence"


def _rendered(value: object, lang: str) -> object:
    return value.render(lang) if isinstance(value, Msg) else value


def _cjk(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf"


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _spaced(template: str, values: dict) -> str:
    """``template.format(**values)``, with a space where a value's Latin letter or digit meets a Chinese character of
    the template ("eps = 1e-4 时", "调用了 softmax"): Chinese typography's one rule at the joins, which a catalog
    cannot write because it does not know the value."""
    import string  # only a screen in another language than English gets here

    formatter, out, after_value = string.Formatter(), "", False
    for literal, field, spec, conversion in formatter.parse(template):
        if literal:
            if after_value and out and _latin(out[-1]) and _cjk(literal[0]):
                out += " "
            out += literal
        if field is None:
            after_value = False
            continue
        value = formatter.convert_field(formatter.get_field(field, (), values)[0], conversion)
        shown = formatter.format_field(value, formatter.vformat(spec, (), values) if spec else "")
        if shown and out and _cjk(out[-1]) and _latin(shown[0]):
            out += " "
        out, after_value = out + shown, True
    return out


def _wire(value: object) -> object:
    if isinstance(value, Msg):
        return value.to_wire()
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # a 0-d tensor or NumPy scalar: its number
        return value.item()
    if isinstance(value, tuple):  # JSON has no tuple; the English must read the same on both sides
        return {"tuple": [_wire(v) for v in value]}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def _unwire(value: object) -> object:
    if isinstance(value, dict):
        return tuple(_unwire(v) for v in value["tuple"]) if "tuple" in value else Msg.from_wire(value)
    if isinstance(value, list):
        return [_unwire(v) for v in value]
    return value


@lru_cache(maxsize=None)
def _gettext(domain: str, lang: str):
    if lang == "en":
        return str
    from drill.text.catalogs import translations

    return translations(domain, lang).gettext


def translated(text: str, lang: str) -> str:
    """``text`` in ``lang``: a Msg from its catalog (English: the Msg itself), any other text as it is."""
    if lang == "en" or not isinstance(text, Msg):
        return str(text)
    return text.render(lang)
