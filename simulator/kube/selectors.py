"""Label and field selectors in the API's string syntax, parsed once and matched against objects."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from haptic.k8s.api import ApiError

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_CMP_RE = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*({_VALUE})\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")
_VALUE_RE = re.compile(rf"^{_VALUE}$")

Matcher = Callable[[Mapping[str, Any]], bool]


def bad_selector(kind: str, text: str, why: str) -> ApiError:
    return ApiError(400, "BadRequest", f"unable to parse requirement: {kind} selector {text!r}: {why}")


def _split_terms(text: str) -> list[str]:
    """Splits on commas that are not inside ``( )``."""
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return [t for t in terms if t.strip()]


@dataclass(frozen=True)
class _Requirement:
    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, Any]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        value = labels.get(self.key)
        if self.op in ("=", "=="):
            return present and value == self.values[0]
        if self.op == "!=":
            return not present or value != self.values[0]
        if self.op == "in":
            return present and value in self.values
        return not present or value not in self.values  # notin


def parse_label_selector(text: str | None) -> Matcher | None:
    """Returns a matcher over an object's labels, or None for "everything"."""
    if text is None or not text.strip():
        return None
    requirements: list[_Requirement] = []
    for term in _split_terms(text):
        if m := _SET_RE.match(term):
            values = tuple(v.strip() for v in m.group(4).split(",") if v.strip())
            for v in values:
                if not _VALUE_RE.match(v):
                    raise bad_selector("label", text, f"invalid value {v!r}")
            if not values:
                raise bad_selector("label", text, f"{m.group(3)} needs at least one value")
            requirements.append(_Requirement(m.group(1), m.group(3), values))
        elif m := _CMP_RE.match(term):
            requirements.append(_Requirement(m.group(1), m.group(3), (m.group(4),)))
        elif m := _EXISTS_RE.match(term):
            requirements.append(_Requirement(m.group(2), "!exists" if m.group(1) else "exists", ()))
        else:
            raise bad_selector("label", text, f"cannot parse {term.strip()!r}")
    reqs = tuple(requirements)

    def match(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in reqs)

    return match


def field_value(obj: Mapping[str, Any], path: str) -> str | None:
    """The string form of a dotted field, as field selectors compare it (missing is ``None``)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if isinstance(node, bool):
        return "true" if node else "false"
    if node is None or isinstance(node, dict | list):
        return None
    return str(node)


def parse_field_selector(text: str | None) -> Matcher | None:
    """Field selectors: ``path=value``, ``path==value``, ``path!=value`` joined by commas."""
    if text is None or not text.strip():
        return None
    terms: list[tuple[str, bool, str]] = []
    for term in _split_terms(text):
        m = re.match(r"^\s*([A-Za-z][A-Za-z0-9_.]*)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if m is None:
            raise bad_selector("field", text, f"cannot parse {term.strip()!r}")
        terms.append((m.group(1), m.group(2) != "!=", m.group(3)))

    def match(obj: Mapping[str, Any]) -> bool:
        for path, equal, value in terms:
            actual = field_value(obj, path)
            if path == "metadata.namespace" and actual is None:
                actual = ""
            if (actual == value) != equal:
                return False
        return True

    return match


def combine(*matchers: Matcher | None) -> Matcher | None:
    active = [m for m in matchers if m is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(m(obj) for m in active)


def label_selector_string(selector: Any) -> str:
    """A label selector (``matchLabels``/``matchExpressions``, or a plain map for ReplicationControllers)
    as the API server prints it: requirements sorted by key, set values sorted."""
    if not isinstance(selector, Mapping):
        return ""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    terms: list[tuple[str, str]] = [(str(k), f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op = str(expr.get("key", "")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if op == "In":
            terms.append((key, f"{key} in ({values})"))
        elif op == "NotIn":
            terms.append((key, f"{key} notin ({values})"))
        elif op == "Exists":
            terms.append((key, key))
        elif op == "DoesNotExist":
            terms.append((key, f"!{key}"))
    return ",".join(text for _, text in sorted(terms))
