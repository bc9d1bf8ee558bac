"""The committed gettext catalogs as the tests read them (drill/text/locale/zh/LC_MESSAGES/<domain>.po and .mo)."""

from __future__ import annotations

import gettext
import io
from pathlib import Path

import drill

CATALOG = Path(drill.__file__).parent / "text" / "locale" / "zh" / "LC_MESSAGES"


def compiled_and_committed(domain: str) -> tuple[dict[str, str], dict[str, str]]:
    """(the messages Babel compiles from the .po, the messages of the committed .mo), headers left out: what drill
    reads through gettext must be the .po compiled, whatever Babel version writes the header."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(CATALOG / f"{domain}.po", "rb") as file:
        catalog = read_po(file)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    with open(CATALOG / f"{domain}.mo", "rb") as file:
        committed = gettext.GNUTranslations(file)
    fresh = gettext.GNUTranslations(compiled)
    return ({k: v for k, v in fresh._catalog.items() if k}, {k: v for k, v in committed._catalog.items() if k})
