"""``x-kubernetes-validations``: CEL rules of CRD schemas, evaluated with cel-python (``celpy``) as the API
server evaluates them with cel-go.

Each rule sees ``self`` (the value at its schema node, typed by the schema: ``number`` fields are doubles)
and, on updates, ``oldSelf`` where the old object has a value at the same place (properties, map keys and
``x-kubernetes-list-type: map`` items correlate); rules that use ``oldSelf`` are skipped otherwise. A false
rule is reported as the API server reports it: ``spec: Invalid value: <message>`` (the value is shown for
scalars only), honouring ``message``, ``messageExpression``, ``fieldPath`` and ``reason``; a rule that fails
to evaluate reads ``spec: Invalid value: "object": no such key: x evaluating rule: <rule>``.

Kubernetes' CEL libraries are partly provided: the string extensions (``lowerAscii``, ``split``, ...),
the list library (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``) and ``find``/``findAll``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache, lru_cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from .field_errors import (
    DUPLICATE,
    FORBIDDEN,
    OMIT,
    REQUIRED,
    FieldError,
    duplicate,
    forbidden,
    invalid_value,
    required,
)

Schema = Mapping[str, Any]
_OLD_SELF = re.compile(r"\boldSelf\b")


@cache
def _env() -> celpy.Environment:
    # Building the environment compiles CEL's grammar (half a second): done when a first rule is compiled,
    # not by every process that imports the fake API.
    return celpy.Environment()


# -- Kubernetes' CEL libraries (the parts operators use most) --------------------------------------------------


def _str(value: Any) -> str:
    return str(value)


def _list(value: Any) -> list[Any]:
    return list(value)


def _split(text: Any, sep: Any, limit: Any = None) -> celtypes.ListType:
    parts = _str(text).split(_str(sep)) if limit is None or int(limit) < 0 else \
        _str(text).split(_str(sep), max(int(limit) - 1, 0))
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    value = _str(text)
    return celtypes.StringType(value[int(start):] if end is None else value[int(start):int(end)])


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_str(sep).join(_str(i) for i in _list(items)))


def _index_of(container: Any, item: Any) -> celtypes.IntType:
    if isinstance(container, str):
        return celtypes.IntType(_str(container).find(_str(item)))
    values = _list(container)
    return celtypes.IntType(values.index(item) if item in values else -1)


def _last_index_of(container: Any, item: Any) -> celtypes.IntType:
    if isinstance(container, str):
        return celtypes.IntType(_str(container).rfind(_str(item)))
    values = _list(container)
    return celtypes.IntType(len(values) - 1 - values[::-1].index(item) if item in values else -1)


def _sum(items: Any) -> Any:
    values = _list(items)
    total: Any = values[0] if values else celtypes.IntType(0)
    for value in values[1:]:
        total = total + value
    return total


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    match = re.search(_str(pattern), _str(text))
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(text: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    found = [m.group(0) for m in re.finditer(_str(pattern), _str(text))]
    if limit is not None and int(limit) >= 0:
        found = found[: int(limit)]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": lambda s: celtypes.StringType(_str(s).lower()),
    "upperAscii": lambda s: celtypes.StringType(_str(s).upper()),
    "trim": lambda s: celtypes.StringType(_str(s).strip()),
    "replace": lambda s, a, b, n=None: celtypes.StringType(
        _str(s).replace(_str(a), _str(b)) if n is None or int(n) < 0 else _str(s).replace(_str(a), _str(b), int(n))),
    "split": _split,
    "substring": _substring,
    "charAt": lambda s, i: celtypes.StringType(_str(s)[int(i)] if int(i) < len(_str(s)) else ""),
    "join": _join,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "isSorted": lambda items: celtypes.BoolType(_list(items) == sorted(_list(items))),
    "sum": _sum,
    "min": lambda items: min(_list(items)),
    "max": lambda items: max(_list(items)),
    "find": _find,
    "findAll": _find_all,
}


@lru_cache(maxsize=2048)
def _program(expression: str) -> celpy.Runner:
    env = _env()
    return env.program(env.compile(expression), functions=FUNCTIONS)


def compile_error(expression: str) -> str | None:
    """Why a rule does not parse (None when it does): CRDs with such rules are refused."""
    try:
        _program(expression)
    except CELParseError as exc:
        return str(exc).strip().splitlines()[0]
    return None


# -- values -------------------------------------------------------------------------------------------------------


def to_cel(value: Any, schema: Schema | None) -> Any:
    """A JSON value as CEL sees it under ``schema`` (numbers as doubles where the schema says ``number``)."""
    schema = schema or {}
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.DoubleType(value) if schema.get("type") == "number" else celtypes.IntType(value)
    if isinstance(value, float):
        if schema.get("type") == "integer" and value.is_integer():
            return celtypes.IntType(int(value))
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else None
        return celtypes.ListType([to_cel(v, items) for v in value])
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        return celtypes.MapType({
            celtypes.StringType(k): to_cel(v, props.get(k) if k in props else
                                           additional if isinstance(additional, Mapping) else None)
            for k, v in value.items()})
    return json_to_cel(value)


def _error_text(exc: Exception) -> str:
    """cel-go's wording for the usual runtime errors."""
    cause = exc.args[1] if len(exc.args) > 1 else None
    detail = exc.args[2] if len(exc.args) > 2 else None
    if cause is KeyError:
        key = detail[0] if isinstance(detail, tuple) and detail else None
        text = str(exc.args[0])
        match = re.search(r"'([^']*)'", text)
        return f"no such key: {key if key is not None else match.group(1) if match else text}"
    if cause is ZeroDivisionError:
        return "division by zero"
    if cause is IndexError:
        return "index out of bounds"
    if cause is TypeError:
        return "no such overload"
    return str(exc.args[0]) if exc.args else str(exc)


# -- evaluation ----------------------------------------------------------------------------------------------------


def _child_path(path: str, name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{path}.{name}" if path else name
    return f"{path}[{name}]"


def _correlate(old: Any, schema: Schema, index: int, item: Any) -> Any:
    if not isinstance(old, list) or schema.get("x-kubernetes-list-type") != "map" or not isinstance(item, dict):
        return None
    keys = [str(k) for k in schema.get("x-kubernetes-list-map-keys") or ()]
    for candidate in old:
        if isinstance(candidate, dict) and all(candidate.get(k) == item.get(k) for k in keys):
            return candidate
    return None


def check(value: Any, old: Any, schema: Schema) -> list[FieldError]:
    """Every ``x-kubernetes-validations`` rule of ``schema`` that ``value`` fails (``old`` on updates)."""
    errors: list[FieldError] = []
    _check(value, old, schema, "", errors, root=True)
    return errors


def _check(value: Any, old: Any, schema: Schema, path: str, errors: list[FieldError], root: bool = False) -> None:
    if value is None:
        return
    rules = schema.get("x-kubernetes-validations")
    if isinstance(rules, list) and rules:
        _evaluate(rules, value, old, schema, path, errors)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if root and key in ("apiVersion", "kind", "metadata"):
                continue
            old_item = old.get(key) if isinstance(old, dict) else None
            if key in props:
                _check(item, old_item, props[key], _child_path(path, key), errors)
            elif isinstance(additional, Mapping):
                _check(item, old_item, additional, f"{path}[{key}]", errors)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _check(item, _correlate(old, schema, index, item), items, f"{path}[{index}]", errors)


def _evaluate(rules: list[Any], value: Any, old: Any, schema: Schema, path: str, errors: list[FieldError]) -> None:
    field = path or "<nil>"
    activation: dict[str, Any] = {"self": to_cel(value, schema)}
    if old is not None:
        activation["oldSelf"] = to_cel(old, schema)
    node_type = str(schema.get("type") or "")
    for rule in rules:
        if not isinstance(rule, Mapping) or not isinstance(rule.get("rule"), str):
            continue
        expression = rule["rule"]
        if _OLD_SELF.search(expression) and old is None:
            continue  # a transition rule: only updates with an old value are checked
        text = expression.strip()
        try:
            result = _program(expression).evaluate(activation)
        except CELEvalError as exc:
            errors.append(invalid_value(field, node_type or OMIT, f"{_error_text(exc)} evaluating rule: {text}"))
            continue
        except CELParseError as exc:
            errors.append(invalid_value(field, node_type or OMIT, f"compilation failed: {exc} evaluating rule: "
                                                                  f"{text}"))
            continue
        if isinstance(result, CELEvalError):
            errors.append(invalid_value(field, node_type or OMIT, f"{_error_text(result)} evaluating rule: {text}"))
            continue
        if isinstance(result, celtypes.BoolType) and bool(result):
            continue
        errors.append(_failure(rule, activation, value, node_type, field))


def _message(rule: Mapping[str, Any], activation: dict[str, Any]) -> str:
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        try:
            produced = _program(expression).evaluate(activation)
        except (CELEvalError, CELParseError):
            produced = None
        if isinstance(produced, str) and produced.strip() and "\n" not in produced:
            return str(produced)
    message = rule.get("message")
    if isinstance(message, str) and message:
        return message
    return f"failed rule: {str(rule['rule']).strip()}"


def _failure(rule: Mapping[str, Any], activation: dict[str, Any], value: Any, node_type: str,
             field: str) -> FieldError:
    detail = _message(rule, activation)
    field_path = rule.get("fieldPath")
    if isinstance(field_path, str) and field_path:
        field = field_path.lstrip(".") if field == "<nil>" else field + (field_path if field_path.startswith(("[", "."))
                                                                          else "." + field_path)
    shown = OMIT if node_type in ("object", "array") or isinstance(value, (dict, list)) else value
    reason = rule.get("reason")
    if reason == FORBIDDEN:
        return forbidden(field, detail)
    if reason == REQUIRED:
        return required(field, detail)
    if reason == DUPLICATE:
        return duplicate(field, shown)
    return invalid_value(field, shown, detail)
