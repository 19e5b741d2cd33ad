"""Generators, expanded when a scenario file loads: ``generate`` (objects from a template) and ``repeat``
(steps several times). Nothing here runs at scenario time: the runner sees plain objects and steps.

``${...}`` inside a generator holds a name (the index ``i``, a ``vars`` entry, the repeat's iteration
variable, a matrix variable) or integer arithmetic over names (``+ - * // %``, parentheses); nothing
else is evaluated. A whole-string reference keeps its type, a reference inside a longer string is
rendered as text (booleans as ``true``/``false``, like the matrix).
"""

from __future__ import annotations

import ast
import functools
import json
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .schema import Generate, GenerateSource, MatrixValue, RepeatHead

_REF = re.compile(r"\$\{([^{}]+)\}")
_OPS: Mapping[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}


class GeneratorError(ValueError):
    """A reference a generator cannot resolve; ``path`` is where in the template it was."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


_FORMAT_SPEC = re.compile(r"^[<>^=]?[+\- ]?#?0?\d*[,_]?(?:\.\d+)?[bdoxXs]?$")


def evaluate(expression: str, values: Mapping[str, Any]) -> Any:
    """The value of ``${expression}``: a name, or integer arithmetic over names and literals, optionally
    followed by a format spec (``${i:04d}`` gives ``0007``; the result is then text)."""
    if ":" in expression:
        expression, spec = expression.split(":", 1)
        if not _FORMAT_SPEC.match(spec):
            raise GeneratorError(f"${{{expression}:{spec}}}: {spec!r} is not a format spec like 04d, x or >6")
        value = evaluate(expression, values)
        try:
            return format(value, spec)
        except ValueError as exc:
            raise GeneratorError(f"${{{expression}:{spec}}}: {exc}") from None
    text = expression.strip()
    if text in values:
        return values[text]
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise GeneratorError(f"cannot read ${{{expression}}}: not a name or integer arithmetic") from None
    return _eval(tree.body, values, expression)


def _eval(node: ast.AST, values: Mapping[str, Any], expression: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            known = ", ".join(sorted(values)) or "none"
            raise GeneratorError(f"undefined variable {node.id!r} in ${{{expression}}} (known here: {known})")
        value = values[node.id]
        if isinstance(value, bool) or not isinstance(value, int):
            raise GeneratorError(f"${{{expression}}}: {node.id} is {value!r}, arithmetic needs integers")
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, values, expression)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left, values, expression), _eval(node.right, values, expression)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0:
            raise GeneratorError(f"${{{expression}}}: division by zero")
        return _OPS[type(node.op)](left, right)
    raise GeneratorError(f"${{{expression}}}: only names, integers and + - * // % are allowed")


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def render(value: Any, values: Mapping[str, Any], path: tuple[str | int, ...] = (),
           only: frozenset[str] | None = None) -> Any:
    """``value`` with every ``${...}`` resolved from ``values``. With ``only``, references naming none of
    those names are left as they are (an inner generator resolves them later)."""
    if isinstance(value, dict):
        if only is not None:
            only = only - names_defined(value)  # an inner generator or repeat defining a name shadows it
            if not only:
                return value
        return {render(k, values, path, only): render(v, values, (*path, str(k)), only) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, values, (*path, n), only) for n, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def resolve(expression: str) -> Any:
        if only is not None and not (set(re.findall(r"[A-Za-z_]\w*", expression.split(":", 1)[0])) & only):
            return None
        try:
            return evaluate(expression, values)
        except GeneratorError as exc:
            raise GeneratorError(str(exc), path) from None

    whole = _REF.fullmatch(value)
    if whole is not None:
        resolved = resolve(whole.group(1))
        return value if resolved is None else resolved

    def substitute(m: re.Match[str]) -> str:
        resolved = resolve(m.group(1))
        return m.group(0) if resolved is None else _text(resolved)

    return _REF.sub(substitute, value)


def generate_values(spec: Generate, position: int, base: Mapping[str, Any]) -> dict[str, Any]:
    """The names object ``position`` (0-based) of ``spec`` sees: ``i``, then each var in order."""
    values: dict[str, Any] = {**base, "i": spec.start + position}
    for name, var in spec.vars.items():
        if isinstance(var, list):
            if not var:
                raise GeneratorError(f"vars.{name} is an empty list", ("vars", name))
            values[name] = var[position % len(var)]
        else:
            values[name] = render(var, values, ("vars", name))
    return values


@functools.lru_cache(maxsize=64)
def _expand(spec_json: str, base_json: str) -> tuple[str, ...]:
    spec = Generate.model_validate_json(spec_json)
    base = json.loads(base_json)
    templates = spec.template if isinstance(spec.template, list) else [spec.template]
    out = []
    for position in range(spec.count):
        values = generate_values(spec, position, base)
        for t, template in enumerate(templates):
            at: tuple[str | int, ...] = ("template", t) if isinstance(spec.template, list) else ("template",)
            out.append(json.dumps(render(template, values, at)))
    return tuple(out)


def expand_generate(spec: Generate, variables: Mapping[str, MatrixValue] | None = None) -> list[dict[str, Any]]:
    """The objects ``spec`` stands for, in order (for each index, each template). Raises ``GeneratorError``."""
    base = json.dumps(dict(variables or {}), sort_keys=True)
    return [json.loads(text) for text in _expand(spec.model_dump_json(), base)]


def names_defined(node: Mapping[str, Any]) -> frozenset[str]:
    """The names a raw ``generate:`` or ``repeat:`` mapping defines for the data below it."""
    if isinstance(node.get("generate"), dict):
        spec = node["generate"]
        variables = spec.get("vars") if isinstance(spec.get("vars"), dict) else {}
        return frozenset({"i", *map(str, variables)})
    if isinstance(node.get("repeat"), dict):
        return frozenset({str(node["repeat"].get("var") or "iteration")})
    return frozenset()


# -- repeat ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlatStep:
    """A raw step of the expanded list, where its text is (data path) and where it came from."""

    data: Any
    path: tuple[str | int, ...]
    origin: str = ""  # "" for a step of the file's own list; "repeat 3/50 of step 4" otherwise


def flatten(steps: Sequence[Any], at: tuple[str | int, ...] = ("steps",), origin: str = "") -> Iterator[FlatStep]:
    """The raw steps with every ``repeat`` expanded (recursively), its iteration variable substituted.
    Raises ``GeneratorError`` (with the data path) for a malformed ``repeat``."""
    for index, step in enumerate(steps):
        path = (*at, index)
        if not (isinstance(step, dict) and set(step) == {"repeat"} and isinstance(step["repeat"], dict)):
            yield FlatStep(step, path, origin)
            continue
        body = step["repeat"]
        try:
            head = RepeatHead.model_validate({k: v for k, v in body.items() if k != "steps"})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise GeneratorError(first["msg"], (*path, "repeat", *first["loc"])) from None
        inner = body.get("steps")
        if not isinstance(inner, list) or not inner:
            raise GeneratorError("a repeat needs a non-empty list of steps", (*path, "repeat", "steps"))
        for k in range(head.times):
            label = f"{origin}, " if origin else ""
            label += f"repeat {k + 1}/{head.times} of step {index + 1}"
            data = render(inner, {head.var: k}, (*path, "repeat", "steps"), only=frozenset({head.var}))
            yield from flatten(data, (*path, "repeat", "steps"), label)
            if head.every is not None and k + 1 < head.times:
                yield FlatStep({"advance": head.every}, (*path, "repeat", "every"), label)


def generated_sources(sources: Sequence[BaseModel]) -> list[Generate]:
    return [s.generate for s in sources if isinstance(s, GenerateSource)]


def summary(objects: Sequence[Mapping[str, Any]]) -> str:
    """``500 objects: Ingress default/web-0 ... default/web-499, Service ...`` (first and last per kind)."""
    by_kind: dict[str, list[str]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        ident = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
        by_kind.setdefault(str(obj.get("kind")), []).append(ident)
    parts = []
    for kind, names in by_kind.items():
        shown = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}" if len(names) > 2 else \
            f"{names[0]}, {names[1]}"
        parts.append(f"{len(names)} x {kind} {shown}")
    return f"{len(objects)} object(s): " + "; ".join(parts)


__all__ = ["FlatStep", "GeneratorError", "evaluate", "expand_generate", "flatten", "generated_sources",
           "names_defined", "render", "summary"]
