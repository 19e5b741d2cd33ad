"""``Status`` error bodies byte for byte as the API server writes them.

Go serializes ``metav1.Status`` with its fields in declaration order, leaves out empty ``omitempty``
fields (so core kinds have no ``details.group``), escapes ``<``, ``>`` and ``&`` and ends the body with a
newline (``json.Encoder.Encode``). The official client's own tests compare such bodies as strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haptic.k8s.api import JSON, ApiError

from .gofmt import go_json

_DETAIL_FIELDS = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
_CAUSE_FIELDS = ("reason", "message", "field")


def _details(details: Mapping[str, Any]) -> JSON:
    out: JSON = {}
    for key in _DETAIL_FIELDS:
        value = details.get(key)
        if key == "causes" and value:
            value = [{k: c[k] for k in _CAUSE_FIELDS if c.get(k)} for c in value]
        if value not in (None, "", [], 0):
            out[key] = value
    return out


def status_object(err: ApiError) -> JSON:
    """The ``Status`` as the server would serialize it (empty fields left out)."""
    status: JSON = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    if err.message:
        status["message"] = err.message
    if err.reason:
        status["reason"] = err.reason
    details = _details(err.details)
    # StatusDetails is a pointer: present (possibly empty) where the server sets it, e.g. on every 404.
    if details or err.details or err.code == 404:
        status["details"] = details
    status["code"] = err.code
    return status


def status_bytes(err: ApiError) -> bytes:
    return (go_json(status_object(err)) + "\n").encode()
