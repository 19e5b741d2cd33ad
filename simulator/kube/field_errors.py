"""Field-level validation errors and the 422 ``Invalid`` answer built from them, worded as the API server's
``field.Error`` and ``apierrors.NewInvalid`` word them (one cause per error, naming the field).

A message reads ``Deployment.apps "web" is invalid: spec.selector: Required value`` (several errors are
joined as ``[a, b]``); each cause carries ``reason`` (the error type), ``message`` (without the field) and
``field``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haptic.k8s.api import Invalid

from .gofmt import go_float, go_quote, go_syntax

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
DUPLICATE = "FieldValueDuplicate"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_FOUND = "FieldValueNotFound"

_TITLES = {REQUIRED: "Required value", INVALID: "Invalid value", NOT_SUPPORTED: "Unsupported value",
           FORBIDDEN: "Forbidden", TOO_LONG: "Too long", TOO_MANY: "Too many", DUPLICATE: "Duplicate value",
           TYPE_INVALID: "Invalid value", NOT_FOUND: "Not found"}
# Error types whose body never shows the value (field.Error.ErrorBody).
_VALUELESS = (REQUIRED, FORBIDDEN, TOO_LONG)


class Raw(str):
    """A value printed verbatim (what Go prints for a typed value, e.g. ``0x0`` or ``[]string{"a"}``)."""


class _Omit:
    pass


OMIT: Any = _Omit()


def value_text(value: Any) -> str:
    """How ``field.Error`` prints a bad value: simple types plainly, strings quoted, the rest as ``%#v``."""
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return '"null"'  # Go substitutes the string "null" for a nil value, then quotes it
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_syntax(value)


@dataclass(frozen=True)
class FieldError:
    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        text = _TITLES[self.type]
        if self.type not in _VALUELESS and self.value is not OMIT:
            text += ": " + value_text(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(REQUIRED, field, OMIT, detail)


def invalid_value(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(INVALID, field, value, detail)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: Any, allowed: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in allowed) if allowed else ""
    return FieldError(NOT_SUPPORTED, field, value, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(FORBIDDEN, field, OMIT, detail)


def too_long(field: str, max_length: int) -> FieldError:
    """``field.TooLongMaxLength`` (schema ``maxLength``)."""
    return FieldError(TOO_LONG, field, OMIT, f"may not be longer than {max_length}" if max_length >= 0
                      else "value is too long")


def too_long_bytes(field: str, max_bytes: int) -> FieldError:
    """``field.TooLong`` (built-in limits such as the 1 MiB of a ConfigMap)."""
    return FieldError(TOO_LONG, field, OMIT, f"must have at most {max_bytes} bytes")


def too_many(field: str, actual: int, maximum: int) -> FieldError:
    return FieldError(TOO_MANY, field, actual if actual >= 0 else OMIT,
                      f"must have at most {maximum} items" if maximum >= 0 else "has too many items")


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(DUPLICATE, field, value)


def immutable(field: str, value: Any) -> FieldError:
    """``apimachineryvalidation.ValidateImmutableField``."""
    return FieldError(INVALID, field, value, "field is immutable")


def qualified_kind(kind: str, group: str) -> str:
    return f"{kind}.{group}" if group else kind


def aggregate(errors: list[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: duplicates dropped, several errors in brackets."""
    seen: dict[str, None] = {}
    for error in errors:
        seen.setdefault(str(error), None)
    messages = list(seen)
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> Invalid:
    """``apierrors.NewInvalid``: the 422 answer naming each field."""
    message = f"{qualified_kind(kind, group)} {go_quote(name)} is invalid"
    if errors:
        message += ": " + aggregate(errors)
    details: dict[str, Any] = {"name": name, "group": group, "kind": kind,
                               "causes": [e.cause() for e in errors]}
    return Invalid(message, details)
