"""The ``ValidatingWebhookConfiguration`` (admissionregistration.k8s.io/v1) that points the API server at us.

One webhook per resource type whose ``watchedResources.<name>.enableValidationWebhook`` is true:
CREATE and UPDATE, ``failurePolicy: Fail``, ``matchPolicy: Equivalent``, ``sideEffects: None``,
``timeoutSeconds: 10``, ``admissionReviewVersions: [v1]``, and a ``clientConfig`` that is either the
controller's Service (in cluster) or a URL (local runs, the simulator) with the CA bundle.

With ``config_namespace``, one more webhook reviews the controller's own HAProxyTemplateConfig in that
namespace (CREATE/UPDATE, ``namespaceSelector`` on ``kubernetes.io/metadata.name``), with
``failurePolicy: Ignore``: the config is how an operator repairs a controller that is down, and the
controller checks every generation again before adopting it.

``sync_webhook_configuration`` applies it through the ``KubeAPI`` port with server-side apply (the
controller is the field manager), or deletes it when no resource enables the webhook.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from haptic.config.models import WatchedResource
from haptic.k8s.api import JSON, KubeAPI, NotFound, ResourceRef
from haptic.names import WEBHOOK_DOMAIN
from haptic.webhook.admission import TEMPLATE_CONFIG_GVR, GroupVersionResource, webhook_resources

WEBHOOK_CONFIGURATIONS = ResourceRef(
    "admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", False, "ValidatingWebhookConfiguration"
)
DEFAULT_NAME = "haptic-validating-webhook"
FIELD_MANAGER = "haptic-controller"
WEBHOOK_PATH = "/validate"
TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class ServiceEndpoint:
    """The webhook reached through a Service (the API server resolves ``<name>.<namespace>.svc``)."""

    namespace: str
    name: str
    port: int = 443
    path: str = WEBHOOK_PATH


def webhook_name(gvr: GroupVersionResource) -> str:
    """A fully qualified webhook name per resource: ``ingresses.networking.k8s.io.validate.haproxy-haptic.org``."""
    return f"{gvr.resource}.{gvr.group or 'core'}.{WEBHOOK_DOMAIN}"


def _client_config(ca_bundle: str, service: ServiceEndpoint | None, url: str | None) -> JSON:
    if (service is None) == (url is None):
        raise ValueError("the webhook needs exactly one of a Service or a URL")
    config: JSON
    if service is not None:
        config = {
            "service": {
                "namespace": service.namespace,
                "name": service.name,
                "path": service.path,
                "port": service.port,
            }
        }
    else:
        assert url is not None
        if not url.startswith("https://"):
            raise ValueError(f"webhook URL must use https, got {url!r}")
        config = {"url": url}
    if ca_bundle:
        config["caBundle"] = ca_bundle
    return config


def build_webhook_configuration(
    resources: Sequence[GroupVersionResource],
    ca_bundle: str,
    *,
    name: str = DEFAULT_NAME,
    service: ServiceEndpoint | None = None,
    url: str | None = None,
    timeout_seconds: int = TIMEOUT_SECONDS,
    labels: Mapping[str, str] | None = None,
    config_namespace: str | None = None,
) -> JSON:
    """The object for ``resources`` (sorted, one webhook each), and the config's own with ``config_namespace``."""
    client = _client_config(ca_bundle, service, url)
    ordered = sorted(set(resources), key=lambda g: (g.group, g.version, g.resource))
    webhooks: list[dict[str, Any]] = [
        {
            "name": webhook_name(gvr),
            "admissionReviewVersions": ["v1"],
            "clientConfig": dict(client),
            "rules": [
                {
                    "apiGroups": [gvr.group],
                    "apiVersions": [gvr.version],
                    "resources": [gvr.resource],
                    "operations": ["CREATE", "UPDATE"],
                    "scope": "*",
                }
            ],
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "timeoutSeconds": timeout_seconds,
        }
        for gvr in ordered
    ]
    if config_namespace:
        gvr = TEMPLATE_CONFIG_GVR
        webhooks.append({
            "name": webhook_name(gvr),
            "admissionReviewVersions": ["v1"],
            "clientConfig": dict(client),
            "rules": [{"apiGroups": [gvr.group], "apiVersions": [gvr.version], "resources": [gvr.resource],
                       "operations": ["CREATE", "UPDATE"], "scope": "Namespaced"}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": config_namespace}},
            "failurePolicy": "Ignore",
            "matchPolicy": "Equivalent",
            "sideEffects": "None",
            "timeoutSeconds": timeout_seconds,
        })
    metadata: JSON = {"name": name}
    if labels:
        metadata["labels"] = dict(sorted(labels.items()))
    return {
        "apiVersion": WEBHOOK_CONFIGURATIONS.api_version,
        "kind": WEBHOOK_CONFIGURATIONS.kind,
        "metadata": metadata,
        "webhooks": webhooks,
    }


async def sync_webhook_configuration(
    api: KubeAPI,
    watched: Mapping[str, WatchedResource],
    ca_bundle: str,
    *,
    name: str = DEFAULT_NAME,
    service: ServiceEndpoint | None = None,
    url: str | None = None,
    timeout_seconds: int = TIMEOUT_SECONDS,
    field_manager: str = FIELD_MANAGER,
    config_namespace: str | None = None,
) -> JSON | None:
    """Applies the configuration for the enabled resources (server-side apply, forced), or deletes it if none.

    Returns the applied object, or ``None`` when there was nothing to register.
    """
    resources = webhook_resources(watched)
    if not resources:
        with contextlib.suppress(NotFound):
            await api.delete(WEBHOOK_CONFIGURATIONS, name)
        return None
    body = build_webhook_configuration(
        resources, ca_bundle, name=name, service=service, url=url, timeout_seconds=timeout_seconds,
        labels={"app.kubernetes.io/managed-by": "haptic"}, config_namespace=config_namespace,
    )
    return await api.patch(WEBHOOK_CONFIGURATIONS, name, body, "apply", field_manager=field_manager, force=True)
