"""``meta.k8s.io/v1`` Table answers, which ``kubectl get`` asks for to print its columns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from haptic.k8s.api import JSON

from .builtin_tables import COLUMNS, since
from .resources import ResourceType
from .selectors import field_value

_NAME = {"name": "Name", "type": "string", "format": "name", "priority": 0,
         "description": "Name must be unique within a namespace."}
_AGE = {"name": "Age", "type": "date", "format": "", "priority": 0,
        "description": "CreationTimestamp is the time the object was created."}


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def age(created: str | None, now: datetime) -> str:
    return since(created, now)


def _columns(rt: ResourceType) -> list[JSON]:
    builtin = None if rt.custom else COLUMNS.get(rt.storage_key)
    if builtin is not None:
        return [_NAME, *(c.definition() for c in builtin)]
    # As the API server does for CRDs: declared additionalPrinterColumns replace the default Age
    # column (a CRD that wants an age declares a date column for creationTimestamp).
    if not rt.printer_columns:
        return [_NAME, _AGE]
    extra = [{"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
              "priority": c.get("priority", 0), "description": c.get("description", "")} for c in rt.printer_columns]
    return [_NAME, *extra]


def _row(rt: ResourceType, obj: JSON, now: datetime) -> JSON:
    meta = obj.get("metadata") or {}
    cells: list[Any] = [meta.get("name", "")]
    builtin = None if rt.custom else COLUMNS.get(rt.storage_key)
    if builtin is not None:
        cells.extend(c.cell(obj, now) for c in builtin)
        return {"cells": cells, "object": _partial(meta)}
    for column in rt.printer_columns:
        path = str(column.get("jsonPath", "")).lstrip(".")
        value = field_value(obj, path) if path else None
        if column.get("type") == "date":
            # Date columns are served as relative ages ("5m"), as kubectl shows them.
            cells.append(age(str(value), now) if value else "<unknown>")
        else:
            cells.append("" if value is None else value)
    if not rt.printer_columns:
        cells.append(age(meta.get("creationTimestamp"), now))
    return {"cells": cells, "object": _partial(meta)}


def _partial(meta: JSON) -> JSON:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def to_table(rt: ResourceType, items: list[JSON], resource_version: str, continue_token: str | None,
             now: datetime) -> JSON:
    metadata: JSON = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
            "columnDefinitions": _columns(rt), "rows": [_row(rt, o, now) for o in items]}


def watch_table(rt: ResourceType, obj: JSON, now: datetime) -> JSON:
    version = (obj.get("metadata") or {}).get("resourceVersion", "")
    return to_table(rt, [obj], str(version), None, now)
