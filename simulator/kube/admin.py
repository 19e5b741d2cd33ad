"""The ``/_sim/`` admin endpoints: faults and state of the fake API over HTTP (arguments as JSON bodies,
validated with pydantic)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from haptic.k8s.api import JSON, NotFound

from .clock import timestamp
from .faults import loop_time
from .loading import load_documents
from .validation import bad_request

if TYPE_CHECKING:
    from .http_app import KubeHTTPServer


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


Handler = Callable[["KubeHTTPServer", Any, bytes], Awaitable[JSON]]


async def _compact(server: KubeHTTPServer, args: Compact, _: bytes) -> JSON:
    return {"resourceVersion": str(server.api.compact(args.resource_version))}


async def _drop(server: KubeHTTPServer, _: _Args, __: bytes) -> JSON:
    return {"dropped": server.api.drop_watches()}


async def _outage(server: KubeHTTPServer, args: Window, _: bytes) -> JSON:
    server.api.faults.outage(args.seconds)
    return server.api.faults.snapshot()


async def _refuse(server: KubeHTTPServer, args: Window, _: bytes) -> JSON:
    await server.refuse(args.seconds)
    return {"refusing": args.seconds}


async def _unauthorized(server: KubeHTTPServer, args: Window, _: bytes) -> JSON:
    server.api.faults.unauthorized(args.seconds)
    return server.api.faults.snapshot()


async def _latency(server: KubeHTTPServer, args: Latency, _: bytes) -> JSON:
    server.api.faults.add_latency(args.seconds, args.duration)
    return server.api.faults.snapshot()


async def _throttle(server: KubeHTTPServer, args: Throttle, _: bytes) -> JSON:
    server.api.faults.throttle(args.seconds, args.retry_after)
    return server.api.faults.snapshot()


async def _conflicts(server: KubeHTTPServer, args: Conflicts, _: bytes) -> JSON:
    server.api.faults.inject_conflicts(args.resource, args.count)
    return server.api.faults.snapshot()


async def _clear(server: KubeHTTPServer, _: _Args, __: bytes) -> JSON:
    server.api.faults.clear()
    return server.api.faults.snapshot()


async def _faults(server: KubeHTTPServer, _: _Args, __: bytes) -> JSON:
    return server.api.faults.snapshot()


async def _load(server: KubeHTTPServer, _: None, body: bytes) -> JSON:
    created = load_documents(server.api, body.decode(), source="request body")
    return {"created": [f"{o['kind']}/{o['metadata']['name']}" for o in created]}


async def _state(server: KubeHTTPServer, _: _Args, __: bytes) -> JSON:
    api = server.api
    return {"resourceVersion": str(api.resource_version), "watchers": api.watcher_count(),
            "loopTime": loop_time(), "now": timestamp(api.now()), "requests": server.requests}


# action -> (argument model, or None when the body is YAML to load; handler)
ACTIONS: dict[str, tuple[type[_Args] | None, Handler]] = {
    "clear": (_Args, _clear),
    "compact": (Compact, _compact),
    "conflicts": (Conflicts, _conflicts),
    "drop-watches": (_Args, _drop),
    "faults": (_Args, _faults),
    "latency": (Latency, _latency),
    "load": (None, _load),
    "outage": (Window, _outage),
    "refuse": (Window, _refuse),
    "state": (_Args, _state),
    "throttle": (Throttle, _throttle),
    "unauthorized": (Window, _unauthorized),
}


async def handle(server: KubeHTTPServer, action: str, body: bytes) -> JSON:
    """Runs one admin action; unknown actions answer 404, bad arguments 400 naming the field."""
    entry = ACTIONS.get(action)
    if entry is None:
        raise NotFound(f"unknown admin action {action!r}; known: {', '.join(ACTIONS)}")
    model, handler = entry
    if model is None:
        return await handler(server, None, body)
    try:
        raw = json.loads(body) if body.strip() else {}
        args = model.model_validate(raw)
    except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError are both ValueErrors
        detail = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()) \
            if isinstance(exc, ValidationError) else str(exc)
        raise bad_request(f"bad arguments for admin action {action!r}: {detail}") from exc
    return await handler(server, args, body)
