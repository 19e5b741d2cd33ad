"""Label and field selectors: parsing the API's string syntax and matching objects against it.

Label selectors follow ``k8s.io/apimachinery/pkg/labels``: ``a=b``, ``a==b``, ``a!=b``,
``a in (x,y)``, ``a notin (x,y)``, ``a`` (exists), ``!a`` (does not exist), ``a>1`` / ``a<1``,
comma-separated and ANDed. ``!=`` and ``notin`` also match objects without the label.

Field selectors are ``path=value`` / ``path==value`` / ``path!=value`` terms, comma-separated and
ANDed, where ``path`` is a JSONPath (``metadata.name``, ``spec.ingressClassName``,
``metadata.labels['app']``). Backslash escapes ``\\,``, ``\\=`` and ``\\\\`` in values as the API
does. A missing field never equals a value and always differs from one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from haptic.k8s.errors import SelectorError as SelectorError
from haptic.k8s.jsonpath import JSONPath, JSONPathError, compile_jsonpath, format_value

LabelOperator = Literal["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]
FieldOperator = Literal["=", "!="]

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY_RE = re.compile(rf"^({_PREFIX}/)?{_NAME}$")
_VALUE_RE = re.compile(rf"^({_NAME})?$")
_TERM_RE = re.compile(r"^\s*(?P<key>[^\s=!<>(),]+)\s*(?P<op>==|=|!=|>|<|\s+in\s*|\s+notin\s*)\s*(?P<rest>.*?)\s*$")


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    operator: LabelOperator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        op = self.operator
        if op == "exists":
            return present
        if op == "!":
            return not present
        if op == "=":
            return present and labels[self.key] == self.values[0]
        if op == "!=":
            return not present or labels[self.key] != self.values[0]
        if op == "in":
            return present and labels[self.key] in self.values
        if op == "notin":
            return not present or labels[self.key] not in self.values
        if not present:
            return False
        try:
            actual = int(labels[self.key])
        except ValueError:
            return False
        bound = int(self.values[0])
        return actual > bound if op == "gt" else actual < bound

    def __str__(self) -> str:
        op = self.operator
        if op == "exists":
            return self.key
        if op == "!":
            return f"!{self.key}"
        if op in ("in", "notin"):
            return f"{self.key} {op} ({','.join(self.values)})"
        symbol = {"=": "=", "!=": "!=", "gt": ">", "lt": "<"}[op]
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class LabelSelector:
    """ANDed requirements; the empty selector matches everything."""

    requirements: tuple[LabelRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        metadata = obj.get("metadata") or {}
        return self.matches(metadata.get("labels") or {})

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)

    @classmethod
    def from_match_labels(cls, match_labels: Mapping[str, str]) -> LabelSelector:
        """Equality requirements in sorted key order (so the string form is stable)."""
        reqs = []
        for key in sorted(match_labels):
            value = str(match_labels[key])
            _check_key(key, str(dict(match_labels)))
            _check_value(value, str(dict(match_labels)))
            reqs.append(LabelRequirement(key, "=", (value,)))
        return cls(tuple(reqs))

    @classmethod
    def from_object(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        """A ``metav1.LabelSelector`` (``matchLabels`` plus ``matchExpressions``)."""
        if not selector:
            return cls()
        text = str(dict(selector))
        reqs = list(cls.from_match_labels(selector.get("matchLabels") or {}).requirements)
        ops: dict[str, LabelOperator] = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
        for expr in selector.get("matchExpressions") or []:
            key = str(expr.get("key", ""))
            _check_key(key, text)
            op = ops.get(str(expr.get("operator")))
            if op is None:
                raise SelectorError(text, f"unknown operator {expr.get('operator')!r} for key {key!r}")
            values = tuple(str(v) for v in expr.get("values") or [])
            if op in ("in", "notin") and not values:
                raise SelectorError(text, f"operator {expr.get('operator')} for key {key!r} needs values")
            if op in ("exists", "!") and values:
                raise SelectorError(text, f"operator {expr.get('operator')} for key {key!r} takes no values")
            for value in values:
                _check_value(value, text)
            reqs.append(LabelRequirement(key, op, values))
        return cls(tuple(reqs))


def _check_key(key: str, selector: str) -> None:
    if len(key) > 253 + 1 + 63 or not _KEY_RE.match(key):
        raise SelectorError(selector, f"invalid label key {key!r}")


def _check_value(value: str, selector: str) -> None:
    if not _VALUE_RE.match(value):
        raise SelectorError(selector, f"invalid label value {value!r}")


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return terms


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parses the string syntax; ``None`` or blank gives the match-everything selector."""
    if text is None or not text.strip():
        return LabelSelector()
    reqs: list[LabelRequirement] = []
    for raw in _split_terms(text):
        term = raw.strip()
        if not term:
            raise SelectorError(text, "empty requirement")
        if term.startswith("!"):
            key = term[1:].strip()
            _check_key(key, text)
            reqs.append(LabelRequirement(key, "!"))
            continue
        m = _TERM_RE.match(term)
        if m is None:
            _check_key(term, text)
            reqs.append(LabelRequirement(term, "exists"))
            continue
        key, op, rest = m.group("key"), m.group("op").strip(), m.group("rest")
        _check_key(key, text)
        if op in ("in", "notin"):
            if not (rest.startswith("(") and rest.endswith(")")):
                raise SelectorError(text, f"{op} needs a parenthesised value list for key {key!r}")
            values = tuple(v.strip() for v in rest[1:-1].split(","))
            if values == ("",):
                raise SelectorError(text, f"{op} needs at least one value for key {key!r}")
            for value in values:
                _check_value(value, text)
            reqs.append(LabelRequirement(key, "in" if op == "in" else "notin", values))
        elif op in (">", "<"):
            try:
                int(rest)
            except ValueError:
                raise SelectorError(text, f"{op} needs an integer for key {key!r}") from None
            reqs.append(LabelRequirement(key, "gt" if op == ">" else "lt", (rest,)))
        else:
            _check_value(rest, text)
            reqs.append(LabelRequirement(key, "!=" if op == "!=" else "=", (rest,)))
    return LabelSelector(tuple(reqs))


@dataclass(frozen=True)
class FieldRequirement:
    path: JSONPath
    operator: FieldOperator
    value: str

    def matches(self, obj: Any) -> bool:
        found = self.path.find(obj)
        if not found:
            return self.operator == "!="
        equal = format_value(found[0]) == self.value
        return equal if self.operator == "=" else not equal

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.path.expression}{self.operator}{escaped}"


@dataclass(frozen=True)
class FieldSelector:
    """ANDed ``path=value`` requirements evaluated client-side; the empty selector matches everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Any) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _split_escaped(text: str, sep: str) -> list[str]:
    """Splits on ``sep`` outside brackets/quotes and not preceded by a backslash; keeps escapes."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and depth:
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(value: str, selector: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            if i + 1 >= len(value) or value[i + 1] not in "\\,=":
                raise SelectorError(selector, f"invalid escape in value {value!r}")
            out.append(value[i + 1])
            i += 2
            continue
        if ch in ",=":
            raise SelectorError(selector, f"unescaped {ch!r} in value {value!r}")
        out.append(ch)
        i += 1
    return "".join(out)


def _find_operator(term: str) -> tuple[int, str] | None:
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == "\\":
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and depth:
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            for op in ("!=", "==", "="):
                if term.startswith(op, i):
                    return i, op
        i += 1
    return None


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parses ``path=value,...``; raises ``SelectorError`` for bad syntax or a bad JSONPath."""
    if text is None or not text.strip():
        return FieldSelector()
    reqs: list[FieldRequirement] = []
    for raw in _split_escaped(text, ","):
        term = raw.strip()
        found = _find_operator(term)
        if not term or found is None:
            raise SelectorError(text, f"requirement {term!r} is not of the form path=value")
        index, op = found
        path_text, value = term[:index].strip(), term[index + len(op) :].strip()
        if not path_text:
            raise SelectorError(text, f"requirement {term!r} has no field path")
        try:
            path = compile_jsonpath(path_text)
        except JSONPathError as exc:
            raise SelectorError(text, str(exc)) from None
        reqs.append(FieldRequirement(path, "!=" if op == "!=" else "=", _unescape(value, text)))
    return FieldSelector(tuple(reqs))
