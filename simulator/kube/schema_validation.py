"""Structural schemas of CustomResourceDefinitions, applied as the API server applies them to custom resources:
unknown fields pruned (and reported, for ``fieldValidation``), non-nullable nulls dropped, ``default``
values filled in, then the OpenAPI checks with kube-openapi's wording.

Supported: ``type`` (``nullable``, ``x-kubernetes-int-or-string``), ``properties``, ``additionalProperties``,
``items``, ``required``, ``enum``, ``pattern``, ``minLength``/``maxLength``, ``format`` (``date-time``,
``byte``, ``int32``, ``int64``), ``minimum``/``maximum`` (exclusive too), ``multipleOf``,
``minItems``/``maxItems``, ``minProperties``/``maxProperties``, ``allOf``/``anyOf``/``oneOf``/``not``,
``x-kubernetes-preserve-unknown-fields``, ``x-kubernetes-embedded-resource`` and ``x-kubernetes-list-type``
(``set``/``map`` uniqueness). Messages read ``spec.size in body must be of type integer: "string"``; errors
are reported in schema order (the API server's order follows Go map iteration and varies).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from .field_errors import (
    OMIT,
    FieldError,
    duplicate,
    invalid_value,
    not_supported,
    required,
    too_long,
    too_many,
    type_invalid,
)
from .gofmt import go_float, go_json, go_value
from .patching import json_copy

Schema = Mapping[str, Any]
_OBJECT_META_FIELDS = frozenset({
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp", "finalizers",
    "generateName", "generation", "labels", "managedFields", "name", "namespace", "ownerReferences",
    "resourceVersion", "selfLink", "uid"})
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def json_type(value: Any) -> str:
    """The OpenAPI type name of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _preserves(schema: Schema) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields"))


# -- pruning and defaulting --------------------------------------------------------------------------------


def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """Removes what the schema does not declare, in place; returns the removed fields' paths."""
    unknown: list[str] = []
    _prune_object(obj, schema, "", unknown, root=True)
    return unknown


def _prune_meta(meta: Any, path: str, unknown: list[str]) -> None:
    if isinstance(meta, dict):
        for key in [k for k in meta if k not in _OBJECT_META_FIELDS]:
            del meta[key]
            unknown.append(_child(path, key))


def _prune_object(value: dict[str, Any], schema: Schema, path: str, unknown: list[str], root: bool = False) -> None:
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        child = _child(path, key)
        if embedded and key in _ROOT_FIELDS:
            if key == "metadata":
                _prune_meta(value[key], child, unknown)
            continue
        if key in props:
            value[key] = _prune(value[key], props[key], child, unknown)
        elif isinstance(additional, Mapping):
            value[key] = _prune(value[key], additional, child, unknown)
        elif additional is True or _preserves(schema):
            continue
        else:
            del value[key]
            unknown.append(child)


def _prune(value: Any, schema: Schema, path: str, unknown: list[str]) -> Any:
    if isinstance(value, dict):
        _prune_object(value, schema, path, unknown)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                value[index] = _prune(item, items, f"{path}[{index}]", unknown)
    return value


def apply_defaults(obj: dict[str, Any], schema: Schema) -> None:
    """Fills in ``default`` values of absent (or non-nullable null) fields and drops the other non-nullable
    nulls, in place, as the API server does when it decodes a custom resource."""
    _default_object(obj, schema, root=True)


def _default_object(value: dict[str, Any], schema: Schema, root: bool = False) -> None:
    props = schema.get("properties") or {}
    for key, prop in props.items():
        if root and key in _ROOT_FIELDS:
            continue
        present = key in value
        if present and value[key] is None and not prop.get("nullable"):
            del value[key]
            present = False
        if not present and "default" in prop:
            value[key] = json_copy(prop["default"])
    additional = schema.get("additionalProperties")
    for key in list(value):
        if root and key in _ROOT_FIELDS:
            continue
        sub = props.get(key) if key in props else additional if isinstance(additional, Mapping) else None
        if sub is not None:
            _default(value[key], sub)


def _default(value: Any, schema: Schema) -> None:
    if isinstance(value, dict):
        _default_object(value, schema)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _default(item, items)


# -- validation ----------------------------------------------------------------------------------------------


def validate(obj: Mapping[str, Any], schema: Schema) -> list[FieldError]:
    """kube-openapi's checks of ``obj`` against ``schema`` (after pruning and defaulting)."""
    errors: list[FieldError] = []
    root = {k: v for k, v in schema.items() if k != "properties"}
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _ROOT_FIELDS}
    _validate(obj, {**root, "properties": props}, "", errors, root=True)
    meta_schema = (schema.get("properties") or {}).get("metadata") or {}
    meta = obj.get("metadata") or {}
    for key in ("name", "generateName"):
        sub = (meta_schema.get("properties") or {}).get(key)
        if isinstance(sub, Mapping) and key in meta:
            _validate(meta[key], sub, f"metadata.{key}", errors)
    return errors


def _type_error(path: str, expected: str, found: str) -> FieldError:
    return type_invalid(path or "<nil>", found, f"{path} in body must be of type {expected}: {go_json(found)}"
                        if path else f"must be of type {expected}: {go_json(found)}")


def _in_body(path: str, text: str) -> str:
    return f"{path} in body {text}" if path else text


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e21 else go_float(float(value))


def _types_of(schema: Schema) -> list[str]:
    if schema.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    declared = schema.get("type")
    if isinstance(declared, str) and declared:
        return [declared]
    if isinstance(declared, list):
        return [str(t) for t in declared]
    return []


def _type_ok(value: Any, types: list[str]) -> bool:
    found = json_type(value)
    if found in types:
        return True
    if found == "integer" and "number" in types:
        return True
    return found == "number" and "integer" in types and float(value).is_integer()


def _field(path: str) -> str:
    return path or "<nil>"


def _validate(value: Any, schema: Schema, path: str, errors: list[FieldError], root: bool = False) -> None:
    types = _types_of(schema)
    if value is None:
        if types and "null" not in types and not schema.get("nullable"):
            errors.append(_type_error(path, ",".join(types), "null"))
        return
    if types and not _type_ok(value, types):
        errors.append(_type_error(path, ",".join(types), json_type(value)))
        _check_enum(value, schema, path, errors)
        return
    _check_combinators(value, schema, path, errors)
    if isinstance(value, str):
        _check_string(value, schema, path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema, path, errors)
    _check_enum(value, schema, path, errors)
    if isinstance(value, list):
        _check_array(value, schema, path, errors)
    elif isinstance(value, dict):
        _check_object(value, schema, path, errors, root)


def _check_combinators(value: Any, schema: Schema, path: str, errors: list[FieldError]) -> None:
    for sub in schema.get("allOf") or ():
        _validate(value, sub, path, errors)
    any_of = schema.get("anyOf")
    if any_of and not any(_passes(value, sub, path) for sub in any_of):
        errors.append(invalid_value(_field(path), _shown(value), _in_body(path, "should match at least one "
                                                                          "schema (anyOf)") if path else
                                    "must validate at least one schema (anyOf)"))
    one_of = schema.get("oneOf")
    if one_of:
        matched = sum(1 for sub in one_of if _passes(value, sub, path))
        if matched != 1:
            errors.append(invalid_value(_field(path), _shown(value), _in_body(path, "must validate one and only one "
                                                                              "schema (oneOf)")))
    not_schema = schema.get("not")
    if isinstance(not_schema, Mapping) and _passes(value, not_schema, path):
        errors.append(invalid_value(_field(path), _shown(value), _in_body(path, "must not validate the schema "
                                                                          "(not)")))


def _shown(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else OMIT


def _passes(value: Any, schema: Schema, path: str) -> bool:
    found: list[FieldError] = []
    _validate(value, schema, path, found)
    return not found


def _check_string(value: str, schema: Schema, path: str, errors: list[FieldError]) -> None:
    field = _field(path)
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and len(value) > max_length:
        errors.append(too_long(field, max_length))
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(value) < min_length:
        errors.append(invalid_value(field, value, _in_body(path, f"should be at least {min_length} chars long")))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _regex(pattern).search(value) is None:
        errors.append(invalid_value(field, value, _in_body(path, f"should match '{pattern}'")))
    fmt = schema.get("format")
    if isinstance(fmt, str) and not _format_ok(value, fmt):
        errors.append(type_invalid(field, value, _in_body(path, f"must be of type {fmt}: {go_json(value)}")))


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _format_ok(value: str, fmt: str) -> bool:
    if fmt == "date-time":
        if not _DATE_TIME.match(value):
            return False
        try:
            datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
        except ValueError:
            return False
        return True
    if fmt == "byte":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
    return True


def _check_number(value: float, schema: Schema, path: str, errors: list[FieldError]) -> None:
    field = _field(path)
    fmt = schema.get("format")
    if isinstance(value, int) and fmt in _INT_RANGES:
        low, high = _INT_RANGES[fmt]
        if value > high:
            errors.append(invalid_value(field, value, _in_body(path, f"should be less than or equal to {high}")))
        elif value < low:
            errors.append(invalid_value(field, value, _in_body(path, f"should be greater than or equal to {low}")))
    multiple = schema.get("multipleOf")
    if isinstance(multiple, (int, float)) and multiple > 0 and not _is_multiple(value, multiple):
        errors.append(invalid_value(field, value, _in_body(path, f"should be a multiple of {_bound(multiple)}")))
    maximum = schema.get("maximum")
    if isinstance(maximum, (int, float)):
        exclusive = bool(schema.get("exclusiveMaximum"))
        if value > maximum or (exclusive and value == maximum):
            text = "should be less than " if exclusive else "should be less than or equal to "
            errors.append(invalid_value(field, value, _in_body(path, text + _bound(maximum))))
    minimum = schema.get("minimum")
    if isinstance(minimum, (int, float)):
        exclusive = bool(schema.get("exclusiveMinimum"))
        if value < minimum or (exclusive and value == minimum):
            text = "should be greater than " if exclusive else "should be greater than or equal to "
            errors.append(invalid_value(field, value, _in_body(path, text + _bound(minimum))))


def _is_multiple(value: float, factor: float) -> bool:
    quotient = value / factor
    return math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9)


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``True`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _check_enum(value: Any, schema: Schema, path: str, errors: list[FieldError]) -> None:
    enum = schema.get("enum")
    if not isinstance(enum, list) or any(_same(value, allowed) for allowed in enum):
        return
    allowed_text = [a if isinstance(a, str) else go_json(a) for a in enum]
    errors.append(not_supported(_field(path), value if isinstance(value, (str, int, float, bool)) else
                                _GoValue(value), allowed_text))


class _GoValue(str):
    """A bad value printed with ``%v`` (maps and slices in an Unsupported-value error)."""

    def __new__(cls, value: Any) -> _GoValue:
        return super().__new__(cls, go_value(value))


def _check_array(value: list[Any], schema: Schema, path: str, errors: list[FieldError]) -> None:
    field = _field(path)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _validate(item, items, f"{path}[{index}]", errors)
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and len(value) < min_items:
        errors.append(invalid_value(field, len(value), _in_body(path, f"should have at least {min_items} items")))
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errors.append(too_many(field, len(value), max_items))
    _check_list_type(value, schema, path, errors)


def _check_list_type(value: list[Any], schema: Schema, path: str, errors: list[FieldError]) -> None:
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[Any] = []
        for index, item in enumerate(value):
            if any(_same(item, s) for s in seen):
                errors.append(duplicate(f"{path}[{index}]", item))
            else:
                seen.append(item)
    elif list_type == "map":
        keys = [str(k) for k in schema.get("x-kubernetes-list-map-keys") or ()]
        seen_keys: list[dict[str, Any]] = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key = {k: item[k] for k in keys if k in item}
            if any(_same(key, s) for s in seen_keys):
                errors.append(duplicate(f"{path}[{index}]", key))
            else:
                seen_keys.append(key)


def _check_object(value: dict[str, Any], schema: Schema, path: str, errors: list[FieldError], root: bool) -> None:
    field = _field(path)
    count = len(value) - (sum(1 for k in _ROOT_FIELDS if k in value) if root else 0)
    min_props = schema.get("minProperties")
    if isinstance(min_props, int) and count < min_props:
        errors.append(invalid_value(field, count, _in_body(path, f"should have at least {min_props} properties")))
        return
    max_props = schema.get("maxProperties")
    if isinstance(max_props, int) and count > max_props:
        errors.append(too_many(field, count, max_props))
        return
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        for key, item in value.items():
            if key not in props and not (root and key in _ROOT_FIELDS):
                _validate(item, additional, _child(path, key), errors)
    for key, prop in props.items():
        if key in value:
            _validate(value[key], prop, _child(path, key), errors)
    for key in schema.get("required") or ():
        if key not in value:
            errors.append(required(_child(path, str(key))))


def walk(schema: Schema, value: Any, path: str = "") -> Iterator[tuple[Schema, Any, str]]:
    """Every (schema node, value, kube-openapi path) pair present in ``value``, parents first."""
    yield schema, value, path
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            sub = props.get(key) if key in props else additional if isinstance(additional, Mapping) else None
            if isinstance(sub, Mapping):
                yield from walk(sub, item, _child(path, key))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                yield from walk(items, item, f"{path}[{index}]")


# Whether a schema carries CEL rules, per schema object: a CRD generation's schema is walked once, not on
# every write of its custom resources.
_HAS_RULES: dict[int, tuple[Schema, bool]] = {}


def has_cel_rules(schema: Schema) -> bool:
    """Whether any node of ``schema`` carries ``x-kubernetes-validations``."""
    hit = _HAS_RULES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_HAS_RULES) > 4096:
        _HAS_RULES.clear()
    found = _any_rules(schema)
    _HAS_RULES[id(schema)] = (schema, found)
    return found


def _any_rules(node: Any) -> bool:
    if isinstance(node, Mapping):
        return bool(node.get("x-kubernetes-validations")) or any(_any_rules(v) for v in node.values())
    if isinstance(node, list):
        return any(_any_rules(v) for v in node)
    return False
