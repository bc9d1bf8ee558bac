"""Map a validation error back to the line of the YAML node that caused it.

Only used on the error path: parsing is done with libyaml's fast loader, and the
slower node tree (which keeps line marks) is composed only when a problem must be
reported with its line.
"""

from __future__ import annotations

import re

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PATH = re.compile(r"\.([A-Za-z_][\w]*)|\[(\d+)\]")


def compose(text: str) -> yaml.Node | None:
    return yaml.compose(text, Loader=_Loader)


def _child(node: yaml.Node, key: str | int) -> tuple[yaml.Node, int] | None:
    """The child node and the line of its key (mappings) or item (sequences)."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for k, v in node.value:
            if k.value == key:
                return v, k.start_mark.line + 1
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        item = node.value[key]
        return item, item.start_mark.line + 1
    return None


def line_of(root: yaml.Node | None, keys: list[str | int]) -> int:
    """The 1-based line of the deepest node reachable along ``keys``."""
    if root is None:
        return 1
    node, line = root, root.start_mark.line + 1
    for key in keys:
        found = _child(node, key)
        if found is None:
            break
        node, line = found
    return line


def parse_msgspec_path(message: str) -> tuple[str, list[str | int]]:
    """Split msgspec's ``"... - at `$.a[0].b`"`` into the message and its key path."""
    head, sep, tail = message.rpartition(" - at `$")
    if not sep:
        return message, []
    path = tail.rstrip("`")
    return head, [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH.finditer(path)]
