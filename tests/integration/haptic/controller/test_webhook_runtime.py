"""``WebhookRuntime`` with a real controller on the simulator, in real time: registration, HTTPS reviews,
writes through the fake API rejected, decisions published on the iteration's bus."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from haptic.controller.loop.iteration import IterationSettings
from haptic.k8s.api import ApiError, NotFound, ResourceRef
from haptic.live.certs import generate_webhook_certs
from haptic.live.webhook_runtime import WebhookRuntime
from haptic.webhook.configuration import WEBHOOK_CONFIGURATIONS
from simulator.cluster_objects import endpoint_slice, ingress
from simulator.kube import InProcessKubeClient
from simulator.kube.admission import enable_admission
from tests.integration.haptic.controller.test_webhook_sim import webhook_config
from tests.integration.kube_helpers import async_wait_until

INGRESSES = ResourceRef("networking.k8s.io/v1", "ingresses", True, "Ingress")


async def test_runtime_registers_and_reviews_real_writes(make_harness: Any, tmp_path: Path) -> None:
    h = await make_harness(config=webhook_config("forbidden"),
                           settings=IterationSettings(reconcile_debounce=0.1, reinit_debounce=0.1))
    h.apply(ingress("web", "web.example", "web"))
    h.apply(endpoint_slice("web", ["10.1.0.1"]))
    enable_admission(h.api)
    kube = InProcessKubeClient(h.api)
    certs = generate_webhook_certs(datetime.now(UTC), directory=tmp_path)
    assert certs.cert_path is not None and certs.key_path is not None
    controller = h.replicas[0].controller
    runtime = WebhookRuntime(controller, kube, certfile=certs.cert_path, keyfile=certs.key_path,
                             ca_bundle=certs.ca_bundle, host="127.0.0.1", port=0)
    await runtime.start()
    try:
        await async_wait_until(lambda: runtime.registrations == 1, what="webhook registration")
        registered = await kube.get(WEBHOOK_CONFIGURATIONS, "haptic-validating-webhook")
        assert registered["webhooks"][0]["clientConfig"]["url"] == runtime.server.url
        assert runtime.validators.built == 1

        with pytest.raises(ApiError) as denied:
            await kube.create(INGRESSES, ingress("forbidden", "f.example", "web"), "default")
        assert denied.value.code == 403 and "forbidden is reserved" in denied.value.message
        created = await kube.create(INGRESSES, ingress("api", "api.example", "api"), "default")
        assert created["metadata"]["name"] == "api"
        # No wait: the handler publishes a decision's events before the server answers the API server,
        # so they are on the bus (and in the trace) by the time the create returns.
        published = [e for e in h.trace if e.event.type.startswith("webhook.validation.")]
        assert [e.event.type for e in published] == [
            "webhook.validation.request", "webhook.validation.denied",
            "webhook.validation.request", "webhook.validation.allowed",
        ]

        # A config that enables no webhook: the registration goes away with the next iteration.
        current = copy.deepcopy(h.template_config())  # the harness hands out the stored object itself
        current["spec"]["watchedResources"]["ingresses"]["enableValidationWebhook"] = False
        h.apply(current)
        await async_wait_until(lambda: runtime.registrations == 2, what="re-registration", limit=30)
        assert controller.iterations == 2
        with pytest.raises(NotFound):
            await kube.get(WEBHOOK_CONFIGURATIONS, "haptic-validating-webhook")
        again = await kube.create(INGRESSES, ingress("forbidden", "f.example", "web"), "default")
        assert again["metadata"]["name"] == "forbidden"
    finally:
        await runtime.stop()
