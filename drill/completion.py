"""Names for shell completion and for ``--help``: topics, question ids, task ids, config keys.

Completion runs drill once per key press, so these read as little as they can: topics come
from each bundled file's ``topic:`` header line (a regular expression over the first lines,
no YAML parse), ids from the compiled bank cache. Nothing here imports torch.
"""

from __future__ import annotations

import re

from drill.errors import DrillError

_TOPIC_LINE = re.compile(r"^topic:\s*([a-z0-9][a-z0-9._-]*)\s*$", re.MULTILINE)


def bundled_topics() -> list[str]:
    """The topics of the bundled bank, sorted (cheap enough to build ``--help`` from)."""
    from drill.paths import bundled_bank_dir

    try:
        folder = bundled_bank_dir()
    except DrillError:  # a broken install: --help must still work
        return []
    found = set()
    for path in folder.glob("*.yaml"):
        with path.open(encoding="utf-8", errors="replace") as fh:
            found.update(_TOPIC_LINE.findall(fh.read(512)))
    return sorted(found)


def _starting(incomplete: str, names) -> list[str]:
    return sorted(n for n in names if n.startswith(incomplete))


def topics(incomplete: str) -> list[str]:
    return _starting(incomplete, bundled_topics())


def question_ids(incomplete: str) -> list[str]:
    from drill.bank.load import load_bank

    try:
        return _starting(incomplete, load_bank(None).questions)
    except DrillError:  # completion never prints an error into the user's shell
        return []


def task_ids(incomplete: str) -> list[str]:
    from drill.whiteboard import catalog

    try:
        return _starting(incomplete, catalog.load())
    except DrillError:
        return []


def config_keys(incomplete: str) -> list[str]:
    from drill.config import KEYS

    return _starting(incomplete, KEYS)

