"""The admission webhook's HTTPS server: ``POST /validate`` and ``GET /healthz`` (starlette on uvicorn).

TLS 1.2 or later with the certificate and key read from files (``reload_certificates`` re-reads them
for new connections; ``cert_check_interval`` polls the files, as cert-manager rotates them in place).
Each request is bounded: body size (``MAX_BODY``), reading the body and answering the review within
``request_timeout`` seconds. Every answered review is counted in ``haptic_webhook_requests_total``
``{gvk,result}`` and timed in ``haptic_webhook_request_duration_seconds`` when metrics are given.

The server knows nothing of templates or stores: it hands the parsed JSON to ``review`` (usually
``AdmissionHandler.review``) and sends back the decision's ``AdmissionReview`` response.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from haptic.controller.metrics import ControllerMetrics
from haptic.core import cancel_and_wait
from haptic.core.json_body import BodyError, parse_json_body
from haptic.live.socket_server import SocketServer
from haptic.webhook.admission import AdmissionDecision, AdmissionReviewError

ReviewFunction = Callable[[Any], Awaitable[AdmissionDecision]]

DEFAULT_PORT = 9443
DEFAULT_REQUEST_TIMEOUT = 10.0
MAX_BODY = 8 * 1024 * 1024
UNKNOWN_GVK = "unknown"

log = logging.getLogger("haptic.webhook")


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BadRequest(413, f"body larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BadRequest(413, f"body larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def build_webhook_app(
    review: ReviewFunction,
    *,
    metrics: ControllerMetrics | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_body: int = MAX_BODY,
) -> Starlette:
    """The ASGI app (usable without TLS through ``httpx.ASGITransport`` in tests)."""

    def record(gvk: str, result: str, started: float) -> None:
        if metrics is not None:
            metrics.record_webhook_request(gvk, result, asyncio.get_running_loop().time() - started)

    async def validate(request: Request) -> Response:
        started = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(request_timeout):
                content_type = request.headers.get("content-type", "").split(";")[0].strip()
                if content_type != "application/json":
                    raise _BadRequest(415, f"content type must be application/json, got {content_type!r}")
                raw = await _read_body(request, max_body)
                try:
                    body = parse_json_body(raw)
                except BodyError as exc:
                    raise _BadRequest(400, str(exc)) from None
                try:
                    decision = await review(body)
                except AdmissionReviewError as exc:
                    raise _BadRequest(400, str(exc)) from None
        except _BadRequest as exc:
            record(UNKNOWN_GVK, "error", started)
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        except TimeoutError:
            record(UNKNOWN_GVK, "error", started)
            return JSONResponse({"error": f"no answer within {request_timeout:g}s"}, status_code=504)
        record(decision.gvk or UNKNOWN_GVK, decision.result, started)
        if not decision.allowed:
            log.info("denied %s %s/%s (%s): %s", decision.operation, decision.kind, decision.name, decision.uid,
                     decision.message)
        return JSONResponse(decision.response())

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/validate", validate, methods=["POST"]), Route("/healthz", healthz)])


class WebhookServer:
    """Serves the webhook app over HTTPS on ``host:port`` (port 0 picks a free one)."""

    def __init__(
        self,
        review: ReviewFunction,
        *,
        certfile: str | Path,
        keyfile: str | Path,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        metrics: ControllerMetrics | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        cert_check_interval: float | None = None,
    ) -> None:
        self.app = build_webhook_app(review, metrics=metrics, request_timeout=request_timeout)
        self.certfile = str(certfile)
        self.keyfile = str(keyfile)
        self.request_timeout = request_timeout
        self.cert_check_interval = cert_check_interval
        self._host = host
        self._serving = SocketServer("webhook-server", host, port)
        self._watcher: asyncio.Task[None] | None = None
        self._ssl: ssl.SSLContext | None = None
        self._stamp: tuple[float, float] | None = None

    @property
    def port(self) -> int:
        return self._serving.port

    @property
    def url(self) -> str:
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"https://{host}:{self.port}/validate"

    @property
    def minimum_tls_version(self) -> ssl.TLSVersion:
        if self._ssl is None:
            raise RuntimeError("webhook server is not started")
        return self._ssl.minimum_version

    def _files_stamp(self) -> tuple[float, float]:
        return (os.stat(self.certfile).st_mtime, os.stat(self.keyfile).st_mtime)

    def reload_certificates(self) -> None:
        """Re-reads the certificate and key; connections made from now on use them."""
        if self._ssl is None:
            raise RuntimeError("webhook server is not started")
        self._ssl.load_cert_chain(self.certfile, self.keyfile)
        self._stamp = self._files_stamp()

    async def start(self) -> None:
        if self._serving.started:
            raise RuntimeError("webhook server already started")
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan="off",
            access_log=False,
            ssl_certfile=self.certfile,
            ssl_keyfile=self.keyfile,
            timeout_keep_alive=int(self.request_timeout),
            timeout_graceful_shutdown=int(self.request_timeout),
        )
        config.load()
        assert config.ssl is not None
        config.ssl.minimum_version = ssl.TLSVersion.TLSv1_2
        self._ssl = config.ssl
        self._stamp = self._files_stamp()
        await self._serving.start(config)
        if self.cert_check_interval:
            self._watcher = asyncio.create_task(self._watch_certificates(self.cert_check_interval))

    async def _watch_certificates(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                if self._files_stamp() != self._stamp:
                    self.reload_certificates()
                    log.info("webhook certificate reloaded from %s", self.certfile)
            except (OSError, ssl.SSLError) as exc:
                # Half-written files during a rotation: keep serving the old pair, try again later.
                log.warning("webhook certificate not reloaded: %s", exc)

    async def stop(self) -> None:
        if self._watcher is not None:
            await cancel_and_wait(self._watcher)
            self._watcher = None
        await self._serving.stop()
