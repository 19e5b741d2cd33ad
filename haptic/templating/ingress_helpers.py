"""Helpers for Ingress templates: the flat list of an Ingress's routes, computed once in Python.

Walking ``spec.rules[].http.paths[]`` and building backend names in Jinja costs several sandboxed
lookups per path; the Ingress library renders tens of thousands of them, so the walk lives here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT = "Default"


def _backend_name(prefix: str, service: Mapping[str, Any]) -> str:
    port = service.get("port") or {}
    return f"{prefix}{service.get('name')}_{port.get('number') or port.get('name')}"


def ingress_paths(ingress: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per service-backed path, plus one of type ``Default`` for ``spec.defaultBackend``.

    Each entry: ``host`` ("" for rules without host), ``path`` (default ``/``), ``type`` (pathType,
    default ``Prefix``; ``Default`` for the default backend), ``key`` (host + path), ``service`` (the
    backend's ``service`` object) and ``backend`` (``ing_<namespace>_<name>_<service>_<port>``).
    Resource backends are ignored. Call it on objects that passed ``reject_unsafe``.
    """
    meta = ingress.get("metadata") or {}
    spec = ingress.get("spec") or {}
    prefix = f"ing_{meta.get('namespace', '')}_{meta.get('name', '')}_"
    out: list[dict[str, Any]] = []
    default = (spec.get("defaultBackend") or {}).get("service")
    if isinstance(default, Mapping):
        backend = _backend_name(prefix, default)
        out.append({"host": "", "path": "", "type": DEFAULT, "key": "", "service": default, "backend": backend})
    for rule in spec.get("rules") or []:
        host = rule.get("host") or ""
        for path in (rule.get("http") or {}).get("paths") or []:
            service = (path.get("backend") or {}).get("service")
            if not isinstance(service, Mapping):
                continue
            value = path.get("path") or "/"
            out.append(
                {
                    "host": host,
                    "path": value,
                    "type": path.get("pathType") or "Prefix",
                    "key": host + value,
                    "service": service,
                    "backend": _backend_name(prefix, service),
                }
            )
    return out
