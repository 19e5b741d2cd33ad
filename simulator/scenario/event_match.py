"""Matching trace records against ``EventMatch`` patterns: values, negation (``not``), alternatives (``in``)
and exclusions (``except``), on payload fields and on the record's ``source``.

A pattern value is compared as the trace renders it (``"3"`` matches ``3``, ``"true"`` matches ``True``).
A mapping made only of the keys ``not`` / ``in`` is a value matcher rather than a literal:

- ``{not: v}`` holds when the field is absent or differs from ``v``;
- ``{in: [a, b]}`` holds when the field is present and equals one of them.

An event matches a pattern when its type is the pattern's, every ``fields`` entry (and ``source``) holds,
and it matches none of the ``except`` alternatives (each a mapping of fields that must all hold to
exclude it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .backend import TraceRecord
from .schema import EventMatch

MATCHER_KEYS = frozenset({"not", "in"})


def is_matcher(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and set(value) <= MATCHER_KEYS


def lookup(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """The value at a dotted path (``a.b.0.c``) and whether it was there."""
    node: Any = data
    for part in dotted.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list | tuple) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def same(expected: Any, actual: Any) -> bool:
    """Equality as a scenario author means it: a string also matches the rendering of a number or bool."""
    if expected == actual:
        return True
    if isinstance(expected, str) and not isinstance(actual, str):
        return expected == str(actual) or (isinstance(actual, bool) and expected == str(actual).lower())
    return False


def value_holds(expected: Any, found: bool, actual: Any) -> bool:
    """Whether a field (``found`` with ``actual``) satisfies ``expected`` (a literal or a matcher)."""
    if is_matcher(expected):
        if "not" in expected and found and same(expected["not"], actual):
            return False
        if "in" in expected:
            options = expected["in"] if isinstance(expected["in"], list) else [expected["in"]]
            if not found or not any(same(option, actual) for option in options):
                return False
        return True
    return found and same(expected, actual)


def _field(record: TraceRecord, key: str) -> tuple[bool, Any]:
    if key == "source":
        return True, record.source
    return lookup(record.data, key)


def _all_hold(fields: Mapping[str, Any], record: TraceRecord) -> bool:
    return all(value_holds(expected, *_field(record, key)) for key, expected in fields.items())


def event_matches(match: EventMatch, record: TraceRecord) -> bool:
    if record.type != match.type:
        return False
    if match.source is not None and not value_holds(match.source, True, record.source):
        return False
    if not _all_hold(match.fields, record):
        return False
    return not any(_all_hold(alternative, record) for alternative in match.except_)


def _render(value: Any) -> str:
    if is_matcher(value):
        parts = []
        if "not" in value:
            parts.append(f"!={value['not']!r}")
        if "in" in value:
            parts.append(f" in {value['in']!r}")
        return "".join(parts)
    return f"={value!r}"


def describe(match: EventMatch) -> str:
    """``type(field=value, source!='x', except source='y')`` for messages."""
    parts = []
    if match.source is not None:
        parts.append(f"source{_render(match.source)}")
    parts.extend(f"{k}{_render(v)}" for k, v in match.fields.items())
    for alternative in match.except_:
        parts.append("except " + " and ".join(f"{k}{_render(v)}" for k, v in alternative.items()))
    return f"{match.type}({', '.join(parts)})" if parts else match.type
