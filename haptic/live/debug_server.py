"""The controller's HTTP introspection: health, readiness, Prometheus metrics and debug variables.

Endpoints (all JSON except ``/metrics``):

- ``/healthz`` (alias ``/health``): the provider's ``haptic.core.HealthReport`` as ``{"status":
  "ok"|"degraded", "components": {name: {"status", "healthy", "reason"}}}``, 503 when degraded;
- ``/readyz``: the same shape from the readiness provider;
- ``/metrics``: the Prometheus text format of the registry the metrics provider returns *now*;
- ``/debug/vars``: the index of variable names; ``/debug/vars/all``: every variable;
- ``/debug/vars/<name>`` with optional ``?field=<jsonpath>`` (kubectl style, ``{.a.b[0]}``, see
  ``haptic.k8s.jsonpath``);
- ``/debug/events?limit=N&correlation_id=X&after=SEQ``: recent events, newest last; each has a ``seq``
  number, ``after`` keeps only those that came after the one a reader saw last.

The server holds *providers* (callables), never state, and ``DebugServer.providers`` can be replaced
at any time (at reinitialization), so one server lives as long as the process. Every answer passes
through a ``Redactor`` built from the secrets provider at request time: credentials never leave.

The app is plain ASGI (Starlette): the simulator calls it in-process through ``httpx.ASGITransport``;
``DebugServer`` serves it over TCP with uvicorn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from haptic.controller.observe.debug_providers import DebugProviders, HealthProvider
from haptic.core import to_json_safe
from haptic.core.redaction import Redactor
from haptic.k8s.jsonpath import JSONPathError, compile_jsonpath
from haptic.live.socket_server import SocketServer

__all__ = ["DebugServer", "FieldPathError", "build_debug_app", "select_field"]

_log = logging.getLogger(__name__)

DEFAULT_EVENT_LIMIT = 100
MAX_EVENT_LIMIT = 1000


# -- field selection ----------------------------------------------------------------------------


class FieldPathError(ValueError):
    """A ``field`` expression that cannot be parsed or matches nothing."""


def select_field(data: Any, expression: str) -> Any:
    """Evaluates a kubectl-style JSONPath (``{.a.b[0]}``, ``.a['b.c'][*].d``, filters ...) with
    ``haptic.k8s.jsonpath``: one match gives the value itself, several give the list of matches."""
    try:
        found = compile_jsonpath(expression).find(data)
    except JSONPathError as exc:
        raise FieldPathError(f"field {expression!r}: {exc.reason}") from exc
    if not found:
        raise FieldPathError(f"field {expression!r}: no match")
    return found[0] if len(found) == 1 else found


# -- the app --------------------------------------------------------------------------------------


class _State:
    def __init__(self, providers: DebugProviders) -> None:
        self.providers = providers

    def redactor(self) -> Redactor:
        # No try/except: if the secrets provider fails the request fails (500), it does not leak.
        return Redactor(self.providers.secrets())


def _json(state: _State, data: Any, status: int = 200) -> Response:
    redacted = state.redactor().data(to_json_safe(data))
    body = json.dumps(redacted, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    return Response(body, status_code=status, media_type="application/json")


def _health(state: _State, provider: HealthProvider) -> Response:
    try:
        report = provider()
    except Exception as exc:
        body: dict[str, Any] = {
            "status": "degraded",
            "components": {"health-provider": {"status": "failed", "healthy": False, "reason": str(exc)}},
        }
        return _json(state, body, 503)
    return _json(state, report.to_dict(), 200 if report.healthy else 503)


def _safe_var(provider: Callable[[], Any]) -> Any:
    # In the "all" view one failing variable must not hide the others.
    try:
        return to_json_safe(provider())
    except Exception as exc:
        return {"error": f"variable failed: {exc}"}


def build_debug_app(providers: DebugProviders) -> Starlette:
    """The ASGI app; ``app.state.debug.providers`` may be replaced while it serves."""
    state = _State(providers)

    async def healthz(_: Request) -> Response:
        return _health(state, state.providers.health)

    async def readyz(_: Request) -> Response:
        return _health(state, state.providers.ready)

    async def metrics(_: Request) -> Response:
        provider = state.providers.metrics
        if provider is None:
            return Response("metrics are not enabled\n", status_code=404, media_type="text/plain")
        text = generate_latest(provider()).decode("utf-8")
        return Response(state.redactor().text(text), media_type=CONTENT_TYPE_LATEST)

    async def vars_index(_: Request) -> Response:
        names = sorted(state.providers.vars)
        return _json(state, {"vars": names, "paths": [f"/debug/vars/{n}" for n in ["all", *names]]})

    async def var(request: Request) -> Response:
        name = request.path_params["name"]
        available = state.providers.vars
        try:
            if name == "all" and "all" not in available:
                value: Any = {n: _safe_var(available[n]) for n in sorted(available)}
            elif name in available:
                value = available[name]()
            else:
                return _json(state, {"error": f"unknown variable {name!r}", "vars": sorted(available)}, 404)
        except Exception as exc:
            return _json(state, {"error": f"variable {name!r} failed: {exc}"}, 500)
        expression = request.query_params.get("field")
        if expression:
            # Redact before selecting, so a field path cannot reach around a masked subtree.
            value = state.redactor().data(to_json_safe(value))
            try:
                value = select_field(value, expression)
            except FieldPathError as exc:
                return _json(state, {"error": str(exc)}, 400)
        return _json(state, value)

    async def events(request: Request) -> Response:
        raw_limit = request.query_params.get("limit", str(DEFAULT_EVENT_LIMIT))
        try:
            limit = int(raw_limit)
        except ValueError:
            return _json(state, {"error": f"limit must be an integer, got {raw_limit!r}"}, 400)
        limit = max(0, min(limit, MAX_EVENT_LIMIT))
        correlation_id = request.query_params.get("correlation_id") or None
        raw_after = request.query_params.get("after", "0")
        if not raw_after.isdigit():
            return _json(state, {"error": f"after must be a sequence number, got {raw_after!r}"}, 400)
        items = list(state.providers.events(limit, correlation_id, int(raw_after)))
        return _json(state, {"count": len(items), "events": items})

    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/health", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics),
            Route("/debug/vars", vars_index),
            Route("/debug/vars/{name}", var),
            Route("/debug/events", events),
        ]
    )
    app.state.debug = state
    return app


class DebugServer:
    """Serves the debug app on ``host:port`` (port 0 picks a free one) for the process's lifetime."""

    def __init__(self, providers: DebugProviders, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = build_debug_app(providers)
        self._serving = SocketServer("debug-server", host, port)

    @property
    def providers(self) -> DebugProviders:
        state: _State = self.app.state.debug
        return state.providers

    @providers.setter
    def providers(self, providers: DebugProviders) -> None:
        state: _State = self.app.state.debug
        state.providers = providers

    @property
    def port(self) -> int:
        return self._serving.port

    @property
    def url(self) -> str:
        return f"http://{self._serving.host}:{self.port}"

    async def start(self) -> None:
        await self._serving.start(uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False))

    async def stop(self) -> None:
        await self._serving.stop()
