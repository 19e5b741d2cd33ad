"""Kubernetes-style JSONPath over plain JSON-shaped objects.

Accepts what the original controller accepts in ``indexBy``, ``fieldSelector`` and
``watchedResourcesIgnoreFields``, plus the k8s template form:

* ``metadata.namespace``, ``.metadata.name``, ``$.metadata.name``, ``{.metadata.name}``;
* escaped dots in names: ``metadata.labels.kubernetes\\.io/service-name``;
* bracket names: ``metadata.labels['kubernetes.io/service-name']`` (single or double quotes),
  unions ``['a','b']`` and ``[0,2]``;
* indexes (negative from the end), slices ``[1:3]``, wildcards ``*`` / ``[*]``, recursive
  descent ``..name``;
* simple filters ``[?(@.name=="http")]`` (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``) and
  existence filters ``[?(@.port)]``.

Wildcards over mappings visit keys in sorted order so results never depend on insertion order.
Missing fields yield no result rather than an error, as in ``kubectl -o jsonpath``.
"""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from haptic.k8s.errors import JSONPathError as JSONPathError

Key = str | int




class _Segment:
    removable = True

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        raise NotImplementedError


@dataclass(frozen=True)
class _Field(_Segment):
    name: str

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        if isinstance(node, Mapping) and self.name in node:
            yield self.name, node[self.name]


@dataclass(frozen=True)
class _Wildcard(_Segment):
    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        if isinstance(node, Mapping):
            for key in sorted(node, key=str):
                yield key, node[key]
        elif _is_list(node):
            yield from enumerate(node)


@dataclass(frozen=True)
class _Index(_Segment):
    index: int

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        if _is_list(node):
            i = self.index + len(node) if self.index < 0 else self.index
            if 0 <= i < len(node):
                yield i, node[i]


@dataclass(frozen=True)
class _Slice(_Segment):
    start: int | None
    stop: int | None
    step: int | None

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        if _is_list(node):
            for i in range(len(node))[self.start : self.stop : self.step]:
                yield i, node[i]


@dataclass(frozen=True)
class _Union(_Segment):
    keys: tuple[Key, ...]

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        for key in self.keys:
            if isinstance(key, str):
                yield from _Field(key).children(node)
            else:
                yield from _Index(key).children(node)


@dataclass(frozen=True)
class _Filter(_Segment):
    path: JSONPath
    op: Callable[[Any, Any], bool] | None
    literal: Any

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        items: Iterator[tuple[Key, Any]]
        if _is_list(node):
            items = enumerate(node)
        elif isinstance(node, Mapping):
            items = ((k, node[k]) for k in sorted(node, key=str))
        else:
            return
        for key, item in items:
            if self._accepts(item):
                yield key, item

    def _accepts(self, item: Any) -> bool:
        found = self.path.find(item)
        if self.op is None:
            return bool(found)
        for value in found:
            try:
                if self.op(value, self.literal):
                    return True
            except TypeError:
                continue
        return False


@dataclass(frozen=True)
class _Descend(_Segment):
    """``..``: the node itself and every node below it, depth first, then the next segment applies."""

    removable = False

    def children(self, node: Any) -> Iterator[tuple[Key, Any]]:
        stack: list[Any] = [node]
        while stack:
            current = stack.pop()
            yield "", current
            if isinstance(current, Mapping):
                stack.extend(current[k] for k in sorted(current, key=str, reverse=True))
            elif _is_list(current):
                stack.extend(reversed(current))


def _is_list(node: Any) -> bool:
    return isinstance(node, Sequence) and not isinstance(node, str | bytes)


class JSONPath:
    """A compiled expression. ``find`` returns every match; ``strip`` returns a copy without them."""

    __slots__ = ("_segments", "expression")

    def __init__(self, expression: str, segments: tuple[_Segment, ...]) -> None:
        self.expression = expression
        self._segments = segments

    def __repr__(self) -> str:
        return f"JSONPath({self.expression!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JSONPath) and other._segments == self._segments

    def __hash__(self) -> int:
        return hash(self._segments)

    @property
    def removable(self) -> bool:
        """Whether ``strip`` supports this expression (recursive descent is not supported there)."""
        return all(s.removable for s in self._segments)

    def find(self, obj: Any) -> list[Any]:
        current = [obj]
        for segment in self._segments:
            nxt: list[Any] = []
            for node in current:
                nxt.extend(value for _, value in segment.children(node))
            if not nxt:
                return nxt
            current = nxt
        return current

    def first(self, obj: Any, default: Any = None) -> Any:
        found = self.find(obj)
        return found[0] if found else default

    def strip(self, obj: Any) -> Any:
        """Returns ``obj`` without the matched locations. Shares untouched subtrees; never mutates ``obj``."""
        if not self.removable:
            raise JSONPathError(self.expression, "recursive descent cannot be used to remove fields")
        if not self._segments:
            return obj
        return _strip(obj, self._segments)


def _strip(node: Any, segments: tuple[_Segment, ...]) -> Any:
    segment, rest = segments[0], segments[1:]
    matches = list(segment.children(node))
    if not matches:
        return node
    if not rest:
        if isinstance(node, Mapping):
            gone = {k for k, _ in matches}
            return {k: v for k, v in node.items() if k not in gone}
        gone_idx = {k for k, _ in matches}
        return [v for i, v in enumerate(node) if i not in gone_idx]
    replaced: dict[Key, Any] = {}
    for key, child in matches:
        new_child = _strip(child, rest)
        if new_child is not child:
            replaced[key] = new_child
    if not replaced:
        return node
    if isinstance(node, Mapping):
        copy = dict(node)
        for key, value in replaced.items():
            copy[key] = value
        return copy
    copy_list = list(node)
    for idx, value in replaced.items():
        copy_list[int(idx)] = value
    return copy_list


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}


class _Parser:
    def __init__(self, expression: str, text: str) -> None:
        self.expression = expression
        self.text = text
        self.pos = 0

    def fail(self, reason: str) -> JSONPathError:
        return JSONPathError(self.expression, f"{reason} at position {self.pos}")

    def parse(self) -> tuple[_Segment, ...]:
        segments: list[_Segment] = []
        text = self.text
        if text.startswith("$"):
            self.pos = 1
        elif text and text[0] not in ".[":
            segments.append(self._name_or_wildcard())
        while self.pos < len(text):
            ch = text[self.pos]
            if text.startswith("..", self.pos):
                self.pos += 2
                segments.append(_Descend())
                if self.pos < len(text) and text[self.pos] == "[":
                    continue
                segments.append(self._name_or_wildcard())
            elif ch == ".":
                self.pos += 1
                segments.append(self._name_or_wildcard())
            elif ch == "[":
                segments.append(self._bracket())
            else:
                raise self.fail(f"unexpected {ch!r}")
        return tuple(segments)

    def _name_or_wildcard(self) -> _Segment:
        text = self.text
        if self.pos < len(text) and text[self.pos] == "*":
            self.pos += 1
            return _Wildcard()
        chars: list[str] = []
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\\" and self.pos + 1 < len(text):
                chars.append(text[self.pos + 1])
                self.pos += 2
                continue
            if ch in ".[":
                break
            if ch in "]'\"(){}" or ch.isspace():
                raise self.fail(f"unexpected {ch!r} in a field name")
            chars.append(ch)
            self.pos += 1
        if not chars:
            raise self.fail("empty field name")
        return _Field("".join(chars))

    def _bracket(self) -> _Segment:
        end = self._closing_bracket()
        inner = self.text[self.pos + 1 : end].strip()
        start = self.pos
        self.pos = end + 1
        if not inner:
            raise JSONPathError(self.expression, f"empty brackets at position {start}")
        if inner == "*":
            return _Wildcard()
        if inner.startswith("?"):
            return self._filter(inner, start)
        parts = _split_top_level(inner, ",")
        keys: list[Key] = []
        for part in parts:
            part = part.strip()
            if part[:1] in ("'", '"'):
                keys.append(self._quoted(part, start))
            elif ":" in part and len(parts) == 1:
                return self._slice(part, start)
            else:
                try:
                    keys.append(int(part))
                except ValueError:
                    raise JSONPathError(self.expression, f"bad subscript {part!r} at position {start}") from None
        if len(keys) == 1:
            key = keys[0]
            return _Field(key) if isinstance(key, str) else _Index(key)
        return _Union(tuple(keys))

    def _closing_bracket(self) -> int:
        quote: str | None = None
        depth = 0
        i = self.pos
        while i < len(self.text):
            ch = self.text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise self.fail("unclosed '['")

    def _quoted(self, part: str, start: int) -> str:
        quote = part[0]
        if len(part) < 2 or part[-1] != quote:
            raise JSONPathError(self.expression, f"unterminated string {part!r} at position {start}")
        body = part[1:-1]
        out: list[str] = []
        i = 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                out.append(body[i + 1])
                i += 2
                continue
            if body[i] == quote:
                raise JSONPathError(self.expression, f"unescaped quote in {part!r} at position {start}")
            out.append(body[i])
            i += 1
        return "".join(out)

    def _slice(self, part: str, start: int) -> _Slice:
        pieces = part.split(":")
        if len(pieces) > 3:
            raise JSONPathError(self.expression, f"bad slice {part!r} at position {start}")
        try:
            values = [int(p) if p.strip() else None for p in pieces]
        except ValueError:
            raise JSONPathError(self.expression, f"bad slice {part!r} at position {start}") from None
        values += [None] * (3 - len(values))
        if values[2] == 0:
            raise JSONPathError(self.expression, f"slice step cannot be zero at position {start}")
        return _Slice(values[0], values[1], values[2])

    def _filter(self, inner: str, start: int) -> _Filter:
        body = inner[1:].strip()
        if not (body.startswith("(") and body.endswith(")")):
            raise JSONPathError(self.expression, f"filter must look like ?(...) at position {start}")
        body = body[1:-1].strip()
        op_name, left, right = _split_comparison(body)
        if not left.startswith("@"):
            raise JSONPathError(self.expression, f"filter must start with '@' at position {start}")
        rel = left[1:].strip()
        try:
            path = JSONPath(rel, _Parser(self.expression, rel).parse()) if rel else JSONPath("@", ())
        except JSONPathError as exc:
            raise JSONPathError(self.expression, f"in filter: {exc.reason}") from None
        if op_name is None:
            return _Filter(path, None, None)
        return _Filter(path, _OPS[op_name], self._literal(right.strip(), start))

    def _literal(self, text: str, start: int) -> Any:
        if text[:1] in ("'", '"'):
            return self._quoted(text, start)
        try:
            return json.loads(text)
        except ValueError:
            raise JSONPathError(self.expression, f"bad literal {text!r} at position {start}") from None


def _split_top_level(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    quote: str | None = None
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _split_comparison(body: str) -> tuple[str | None, str, str]:
    quote: str | None = None
    for i, ch in enumerate(body):
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
            continue
        for op_name in ("==", "!=", "<=", ">=", "<", ">"):
            if body.startswith(op_name, i):
                return op_name, body[:i].strip(), body[i + len(op_name) :]
    return None, body.strip(), ""


@functools.lru_cache(maxsize=1024)
def compile_jsonpath(expression: str) -> JSONPath:
    """Compiles ``expression``; raises ``JSONPathError`` naming it when it is not valid."""
    if not isinstance(expression, str):
        raise JSONPathError(repr(expression), "not a string")
    text = expression.strip()
    if text.startswith("{"):
        if not text.endswith("}"):
            raise JSONPathError(expression, "unbalanced '{'")
        text = text[1:-1].strip()
    if not text:
        raise JSONPathError(expression, "empty expression")
    if text in ("$", "@"):
        return JSONPath(expression, ())
    return JSONPath(expression, _Parser(expression, text).parse())


def format_value(value: Any) -> str:
    """The text of a matched value as Go's ``fmt.Sprint`` would give it for JSON scalars (maps/lists as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
