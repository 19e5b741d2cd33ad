"""Faults as data, and the ``/_sim/`` admin endpoints that expose them over HTTP.

A fault is a mapping such as ``{"fault": "outage", "seconds": 5}``; ``apply_fault`` validates it with
pydantic and applies it to a ``FakeKubeAPI`` (scenarios use it in-process, the HTTP app per request).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from haptic.k8s.api import JSON, NotFound

from .clock import timestamp
from .faults import loop_time
from .loading import load_documents
from .validation import bad_request

if TYPE_CHECKING:
    from .http_app import KubeHTTPServer
    from .store import FakeKubeAPI


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Window(_Args):
    seconds: float = Field(10.0, ge=0)


class Throttle(Window):
    retry_after: float = Field(1.0, ge=0, alias="retryAfter")


class Latency(_Args):
    seconds: float = Field(0.1, ge=0)
    duration: float | None = Field(None, ge=0)


class Conflicts(_Args):
    resource: str = Field(min_length=1)
    count: int = Field(1, ge=1)


class Compact(_Args):
    resource_version: int | None = Field(None, ge=0, alias="resourceVersion")


def _compact(api: FakeKubeAPI, args: Compact) -> JSON:
    return {"resourceVersion": str(api.compact(args.resource_version))}


def _drop(api: FakeKubeAPI, _: _Args) -> JSON:
    return {"dropped": api.drop_watches()}


def _outage(api: FakeKubeAPI, args: Window) -> JSON:
    api.outage(args.seconds)
    return api.faults.snapshot()


def _refuse(api: FakeKubeAPI, args: Window) -> JSON:
    api.refuse_connections(args.seconds)
    return api.faults.snapshot()


def _unauthorized(api: FakeKubeAPI, args: Window) -> JSON:
    api.unauthorized(args.seconds)
    return api.faults.snapshot()


def _latency(api: FakeKubeAPI, args: Latency) -> JSON:
    api.add_latency(args.seconds, args.duration)
    return api.faults.snapshot()


def _throttle(api: FakeKubeAPI, args: Throttle) -> JSON:
    api.throttle(args.seconds, args.retry_after)
    return api.faults.snapshot()


def _conflicts(api: FakeKubeAPI, args: Conflicts) -> JSON:
    api.inject_conflicts(args.resource, args.count)
    return api.faults.snapshot()


def _clear(api: FakeKubeAPI, _: _Args) -> JSON:
    api.clear_faults()
    return api.faults.snapshot()


FAULTS: dict[str, tuple[type[_Args], Callable[[FakeKubeAPI, Any], JSON]]] = {
    "clear": (_Args, _clear),
    "compact": (Compact, _compact),
    "conflicts": (Conflicts, _conflicts),
    "drop-watches": (_Args, _drop),
    "latency": (Latency, _latency),
    "outage": (Window, _outage),
    "refuse": (Window, _refuse),
    "throttle": (Throttle, _throttle),
    "unauthorized": (Window, _unauthorized),
}


def _validate(model: type[_Args], action: str, raw: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'fault'}: {e['msg']}" for e in exc.errors())
        raise bad_request(f"bad arguments for fault {action!r}: {detail}") from exc


def apply_fault(api: FakeKubeAPI, spec: Mapping[str, Any]) -> JSON:
    """Applies ``{"fault": NAME, ...arguments}``; unknown faults answer 404, bad arguments 400 naming the field."""
    action = str(spec.get("fault", ""))
    entry = FAULTS.get(action)
    if entry is None:
        raise NotFound(f"unknown fault {action!r}; known: {', '.join(FAULTS)}")
    model, apply = entry
    return apply(api, _validate(model, action, {k: v for k, v in spec.items() if k != "fault"}))


async def handle(server: KubeHTTPServer, action: str, body: bytes) -> JSON:
    """One ``/_sim/<action>`` request: a fault (JSON arguments), ``load`` (YAML), ``faults``, ``requests``
    (the request log) or ``state``."""
    api = server.api
    if action == "load":
        created = load_documents(api, body.decode(), source="request body")
        return {"created": [f"{o['kind']}/{o['metadata']['name']}" for o in created]}
    if action == "faults":
        return api.faults.snapshot()
    if action == "requests":
        return {"requests": [{"method": m, "path": p, "status": c} for m, p, c in server.request_log]}
    if action == "state":
        return {"resourceVersion": str(api.resource_version), "watchers": api.watcher_count(),
                "loopTime": loop_time(), "now": timestamp(api.now()), "requests": server.requests}
    try:
        args = json.loads(body) if body.strip() else {}
    except ValueError as exc:
        raise bad_request(f"admin requests take a JSON object: {exc}") from exc
    if not isinstance(args, dict):
        raise bad_request("admin requests take a JSON object")
    if action not in FAULTS:
        known = ", ".join([*FAULTS, "faults", "load", "requests", "state"])
        raise NotFound(f"unknown admin action {action!r}; known: {known}")
    if action == "refuse":
        window = _validate(Window, action, args)
        await server.refuse(window.seconds)  # also stops listening
        return api.faults.snapshot()
    return apply_fault(api, {**args, "fault": action})
