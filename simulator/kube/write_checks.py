"""What the API server checks of every write before it stores anything, in its order: fields dropped from
the body (reported per ``fieldValidation``), defaults, then validation (422 naming each field).

Custom resources follow their CRD's structural schema (``schema_validation``) and CEL rules
(``cel_rules``); built-in kinds drop what their client model (``models``) does not declare and are
checked by ``builtin_validation``. Raising leaves the store
untouched: the store calls these before committing.
"""

from __future__ import annotations

from typing import Any

from haptic.k8s.api import JSON

from . import builtin_validation, field_validation, models, schema_validation
from .field_errors import NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, TYPE_INVALID, invalid_value
from .patching import json_copy
from .resources import ResourceType
from .validation import invalid

_BLOCKING = (NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, TYPE_INVALID)


def check_write(rt: ResourceType, obj: JSON, old: JSON | None, operation: str, how: str,
                subresource: str | None = None) -> None:
    """Prunes, defaults and validates ``obj`` (the object about to be stored) in place, or raises."""
    if not rt.custom:
        model = models.root_model(rt)
        if model is not None:
            dropped = models.undeclared(obj, model)
            if dropped:
                field_validation.report_unknown(rt, [models.decode_path(p) for p in dropped], how, operation, obj)
        # A status write validates the status only (none of the checked kinds constrain theirs).
        found = builtin_validation.errors(rt, obj, old) if subresource is None else []
        if found:
            raise invalid(rt, str((obj.get("metadata") or {}).get("name") or ""), found)
        return
    schema = rt.schema
    if schema is None:
        return
    unknown = schema_validation.prune(obj, schema)
    field_validation.report_unknown(rt, unknown, how, operation, obj)
    schema_validation.apply_defaults(obj, schema)
    errors = schema_validation.validate(obj, schema)
    if not schema_validation.has_cel_rules(schema):
        pass
    elif any(e.type in _BLOCKING for e in errors):
        # CEL rules cannot be trusted on a value of the wrong shape: the API server skips them and says so.
        errors.append(invalid_value("<nil>", None, "some validation rules were not checked because the object "
                                                   "was invalid; correct the existing errors to complete validation"))
    else:
        # cel-python (and CEL's grammar) load only once a CRD has rules: most processes never need them.
        from . import cel_rules

        errors.extend(cel_rules.check(obj, old, schema))
    if errors:
        raise invalid(rt, str((obj.get("metadata") or {}).get("name") or ""), errors)


def check_apply_body(rt: ResourceType, body: Any, namespace: str | None, name: str) -> None:
    """Server-side apply refuses fields the type does not declare, whatever ``fieldValidation`` says."""
    if not rt.custom and isinstance(body, dict):
        model = models.root_model(rt)
        if model is not None:
            paths = models.undeclared(json_copy(body), model)
            field_validation.refuse_apply(rt, namespace, name, [models.apply_path(p, rt.kind) for p in paths])
        return
    schema = rt.schema if rt.custom else None
    if schema is None or not isinstance(body, dict):
        return
    unknown = schema_validation.prune(json_copy(body), schema)
    field_validation.refuse_apply(rt, namespace, name, ["." + path for path in unknown])
