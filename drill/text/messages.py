"""Error messages as ids with named parameters (gettext's convention: the id is the English template), rendered at
the edge in the user's language from the catalog ``locale/<lang>/LC_MESSAGES/messages.po`` (compiled with Babel).
A :class:`Msg` is the English text itself (a ``str``), so logs, tests and ``str(exc)`` read it as before; the catalog
loads only when an error is printed in another language."""

from __future__ import annotations

from typing import Callable

DOMAIN = "messages"


class Msg(str):
    """A message: English text whose ``msgid`` and ``params`` let it be rendered again in another language.
    A parameter that is itself a Msg (an English phrase) is translated too; any other (a name, a number) goes in as is."""

    def __new__(cls, msgid: str, **params: object) -> "Msg":
        text = super().__new__(cls, msgid.format(**params) if params else msgid)
        text.msgid, text.params = msgid, params
        return text

    def render(self, gettext: Callable[[str], str]) -> str:
        if not self.params:
            return gettext(self.msgid)
        values = {name: value.render(gettext) if isinstance(value, Msg) else value for name, value in self.params.items()}
        return gettext(self.msgid).format(**values)

    def to_wire(self) -> dict:
        """JSON for a message that crosses a process boundary (the judge's usage errors)."""
        return {"msgid": self.msgid, "params": {k: v.to_wire() if isinstance(v, Msg) else v for k, v in self.params.items()}}

    @classmethod
    def from_wire(cls, wire: object) -> "Msg":
        """The message of :meth:`to_wire`; anything else (a stray or garbled event) as its text, untranslated."""
        try:
            params = {k: cls.from_wire(v) if isinstance(v, dict) else v for k, v in (wire.get("params") or {}).items()}
            return cls(str(wire["msgid"]), **params)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            return cls(str(wire))


def translated(text: str, lang: str) -> str:
    """``text`` in ``lang``: a Msg from the catalog (English: the Msg itself), any other text as it is."""
    if lang == "en" or not isinstance(text, Msg):
        return str(text)
    from drill.text.catalogs import translations

    return text.render(translations(DOMAIN, lang).gettext)
