"""Did-you-mean for names the user types: topics, question ids, task ids, config keys.

difflib (standard library, no import cost worth measuring) is enough for lists of a few
hundred names; a prefix match comes first so ``mask`` finds ``masks`` before ``tasks``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, names: Iterable[str]) -> str | None:
    """The known name the user most likely meant, or None when nothing is close."""
    names = list(names)
    lowered = word.lower()
    prefixed = sorted(n for n in names if n.lower().startswith(lowered) or lowered.startswith(n.lower()))
    if prefixed:
        return min(prefixed, key=lambda n: abs(len(n) - len(word)))
    found = difflib.get_close_matches(lowered, names, n=1, cutoff=0.6)
    return found[0] if found else None


def hint(word: str, names: Iterable[str]) -> str:
    """``"; did you mean masks?"`` (a message, rendered in the user's language) or an empty string, to append to an error."""
    from drill.text.messages import Msg

    match = closest(word, names)
    return Msg("; did you mean {name}?", name=match) if match and match != word else ""
