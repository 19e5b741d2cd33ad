"""The ValidatingWebhookConfiguration: built for the enabled resources, applied and removed through KubeAPI."""

from __future__ import annotations

import pytest

from haptic.config.models import WatchedResource
from haptic.k8s.api import NotFound
from haptic.webhook.admission import GroupVersionResource
from haptic.webhook.configuration import (
    WEBHOOK_CONFIGURATIONS,
    ServiceEndpoint,
    build_webhook_configuration,
    sync_webhook_configuration,
)
from simulator.kube import FakeKubeAPI, InProcessKubeClient


def watched(api_version: str, resources: str, enabled: bool) -> WatchedResource:
    return WatchedResource.model_validate(
        {"apiVersion": api_version, "resources": resources, "indexBy": ["metadata.name"],
         "enableValidationWebhook": enabled}
    )


WATCHED = {
    "ingresses": watched("networking.k8s.io/v1", "ingresses", True),
    "more-ingresses": watched("networking.k8s.io/v1", "ingresses", True),
    "services": watched("v1", "services", True),
    "endpoints": watched("discovery.k8s.io/v1", "endpointslices", False),
}


def test_one_webhook_per_enabled_resource_with_the_fixed_policies() -> None:
    body = build_webhook_configuration(
        [GroupVersionResource(group="networking.k8s.io", version="v1", resource="ingresses"),
         GroupVersionResource(version="v1", resource="services")],
        "Q0E=",
        service=ServiceEndpoint("haptic-system", "haptic-webhook"),
    )
    assert body["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert body["kind"] == "ValidatingWebhookConfiguration"
    hooks = body["webhooks"]
    assert [h["name"] for h in hooks] == ["services.core.validate.haproxy-haptic.org",
                                          "ingresses.networking.k8s.io.validate.haproxy-haptic.org"]
    first = hooks[1]
    assert first["rules"] == [{"apiGroups": ["networking.k8s.io"], "apiVersions": ["v1"], "resources": ["ingresses"],
                               "operations": ["CREATE", "UPDATE"], "scope": "*"}]
    assert (first["failurePolicy"], first["sideEffects"], first["timeoutSeconds"]) == ("Fail", "None", 10)
    assert first["admissionReviewVersions"] == ["v1"]
    assert first["clientConfig"] == {
        "service": {"namespace": "haptic-system", "name": "haptic-webhook", "path": "/validate", "port": 443},
        "caBundle": "Q0E=",
    }
    with pytest.raises(ValueError, match="https"):
        build_webhook_configuration([], "", url="http://127.0.0.1:1/validate")
    with pytest.raises(ValueError, match="exactly one"):
        build_webhook_configuration([], "")


async def test_sync_applies_then_deletes_when_nothing_is_enabled() -> None:
    api = FakeKubeAPI()
    client = InProcessKubeClient(api)
    applied = await sync_webhook_configuration(client, WATCHED, "Q0E=", url="https://127.0.0.1:9443/validate")
    assert applied is not None
    stored = await client.get(WEBHOOK_CONFIGURATIONS, "haptic-validating-webhook")
    assert [h["name"] for h in stored["webhooks"]] == ["services.core.validate.haproxy-haptic.org",
                                                       "ingresses.networking.k8s.io.validate.haproxy-haptic.org"]
    assert stored["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:9443/validate"
    assert stored["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "haptic"}
    # Re-applying the same object changes nothing; the controller owns the fields it applied.
    again = await sync_webhook_configuration(client, WATCHED, "Q0E=", url="https://127.0.0.1:9443/validate")
    assert again is not None and again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    managers = [m["manager"] for m in stored["metadata"].get("managedFields", [])]
    assert managers == ["haptic-controller"]
    disabled = {"endpoints": WATCHED["endpoints"]}
    assert await sync_webhook_configuration(client, disabled, "Q0E=", url="https://127.0.0.1:9443/validate") is None
    with pytest.raises(NotFound):
        await client.get(WEBHOOK_CONFIGURATIONS, "haptic-validating-webhook")
    # Deleting what is not there is fine.
    assert await sync_webhook_configuration(client, disabled, "", url="https://127.0.0.1:9443/validate") is None
