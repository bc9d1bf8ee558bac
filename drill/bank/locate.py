"""Map a validation error back to the line of the YAML node that caused it.

Only used on the error path: parsing is done with libyaml's fast loader, and the
slower node tree (which keeps line marks) is composed only when a problem must be
reported with its line.
"""

from __future__ import annotations

import re

import yaml
from yaml.constructor import ConstructorError

from drill.text.messages import Msg

_PATH = re.compile(r"\.([A-Za-z_][\w]*)|\[(\d+)\]")


class Refused(ConstructorError):
    """Valid YAML that a bank must not contain; ``problem`` is the message, ``problem_mark`` its place."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's safe loader, refusing what it would otherwise accept silently (a repeated key) or crash on."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                line = key.start_mark.line + 1
                if (key.tag, key.value) in first:
                    raise Refused(None, None, Msg("key `{key}` given twice in one mapping (lines {first} and {line}); keep one", key=key.value, first=first[key.tag, key.value], line=line), key.start_mark)
                first[key.tag, key.value] = line
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node):
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # Python refuses to read an integer of thousands of digits
            raise Refused(None, None, Msg("a number {n} characters long is too large for any field", n=len(node.value)), node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)  # shown as is - the base class registered its own


def compose(text: str) -> yaml.Node | None:
    """The node tree for line lookups; None when it cannot be built (the problem is then reported at line 1)."""
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None


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
