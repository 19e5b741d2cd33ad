"""``WebhookRuntime``: the admission webhook of a running ``Controller``, for the process's lifetime.

It serves ``WebhookServer`` with an ``AdmissionHandler`` whose validator follows the controller's
iterations (``IterationValidators``), publishes each decision's events on the current iteration's
bus, and keeps the ``ValidatingWebhookConfiguration`` in step: whenever a new iteration has synced,
the registration is re-applied (server-side apply, idempotent across replicas) for the resources
that iteration's config enables, or deleted when it enables none.

Wiring in ``haptic run`` (a few lines)::

    runtime = WebhookRuntime(controller, kube, certfile=..., keyfile=..., ca_bundle=...,
                             service=ServiceEndpoint(namespace, "haptic-webhook"), metrics=metrics)
    await runtime.start()   # ... await runtime.stop() on shutdown
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from haptic.controller.loop.webhook_binding import IterationValidators, decision_events
from haptic.controller.metrics import ControllerMetrics
from haptic.core import cancel_and_wait
from haptic.k8s.api import ApiError, KubeAPI
from haptic.live.webhook_server import DEFAULT_PORT, WebhookServer
from haptic.webhook.admission import DEFAULT_TIMEOUT, AdmissionDecision, AdmissionHandler
from haptic.webhook.configuration import DEFAULT_NAME, ServiceEndpoint, sync_webhook_configuration

if TYPE_CHECKING:
    from haptic.controller.context import IterationContext
    from haptic.controller.loop.controller import Controller

log = logging.getLogger("haptic.webhook")

FOLLOW_INTERVAL = 1.0
RETRY_INTERVAL = 10.0


class WebhookRuntime:
    def __init__(
        self,
        controller: Controller,
        kube: KubeAPI,
        *,
        certfile: str | Path,
        keyfile: str | Path,
        ca_bundle: str,
        service: ServiceEndpoint | None = None,
        url: str | None = None,
        host: str = "0.0.0.0",
        port: int = DEFAULT_PORT,
        metrics: ControllerMetrics | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        configuration_name: str = DEFAULT_NAME,
        cert_check_interval: float | None = 60.0,
    ) -> None:
        self.controller = controller
        self.kube = kube
        self.ca_bundle = ca_bundle
        self.service = service
        self.url = url
        self.configuration_name = configuration_name
        self.validators = IterationValidators(controller, timeout=timeout)
        self.handler = AdmissionHandler(source=self.validators, observers=[self._publish])
        self.server = WebhookServer(
            self.handler.review, certfile=certfile, keyfile=keyfile, host=host, port=port, metrics=metrics,
            cert_check_interval=cert_check_interval,
        )
        self.registrations = 0
        self._registered: IterationContext | None = None
        self._task: asyncio.Task[None] | None = None

    def _publish(self, decision: AdmissionDecision) -> None:
        iteration = self.controller.iteration
        if iteration is None:
            return
        for event in decision_events(decision):
            iteration.bus.publish(event)

    def _synced_context(self) -> IterationContext | None:
        iteration = self.controller.iteration
        if iteration is None or not all(w.synced.is_set() for w in iteration.watchers):
            return None
        return iteration.ctx

    async def register(self) -> bool:
        """Applies the registration for the current iteration if it has not been yet; True when it did."""
        ctx = self._synced_context()
        if ctx is None or ctx is self._registered:
            return False
        await sync_webhook_configuration(
            self.kube, ctx.spec.watched_resources, self.ca_bundle, name=self.configuration_name,
            service=self.service, url=self.url, config_namespace=ctx.namespace,
        )
        self._registered = ctx
        self.registrations += 1
        # Build the validator now: its validationTests start in the background before the first review.
        self.validators()
        return True

    async def _follow(self) -> None:
        while True:
            try:
                await self.register()
                await asyncio.sleep(FOLLOW_INTERVAL)
            except ApiError as exc:
                log.warning("webhook registration failed (%s); retrying in %.0fs", exc, RETRY_INTERVAL)
                await asyncio.sleep(RETRY_INTERVAL)

    async def start(self) -> None:
        await self.server.start()
        if self.service is None and self.url is None:
            # Local runs and tests: register the address just bound (a routable host, not 0.0.0.0).
            self.url = self.server.url
        self._task = asyncio.create_task(self._follow(), name="webhook-registration")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        await self.server.stop()
