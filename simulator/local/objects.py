"""Kubernetes objects of a local stack: the controller's config and Secret, the demo application.

``demo_template_config`` is the embedded default HAProxyTemplateConfig: the shipped ``ingress``
template library (selected by annotation) with the ports and pod selector of this stack.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from haptic.k8s.api import JSON
from haptic.templating.libraries import expand_libraries

LIBRARIES_ANNOTATION = "haproxy-haptic.org/template-libraries"
INGRESS_CONTROLLER = "haproxy-haptic.org/controller"


def namespace(name: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def credentials_secret(name: str, ns: str, username: str, password: str) -> JSON:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": name, "namespace": ns},
            "data": {"dataplane_username": b64(username), "dataplane_password": b64(password)}}


def ingress_class(name: str = "haptic") -> JSON:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": name},
            "spec": {"controller": INGRESS_CONTROLLER}}


def demo_template_config(name: str, ns: str, *, pod_labels: Mapping[str, str], dataplane_port: int,
                         http_port: int, https_port: int, stats_port: int, secret_name: str,
                         ingress_class_name: str = "haptic", server_slots: int = 4,
                         min_deployment_interval: str = "500ms", maxconn: int = 1000) -> JSON:
    return {
        "apiVersion": "haproxy-haptic.org/v1alpha1",
        "kind": "HAProxyTemplateConfig",
        "metadata": {"name": name, "namespace": ns, "annotations": {LIBRARIES_ANNOTATION: "ingress"}},
        "spec": {
            "credentialsSecretRef": {"name": secret_name},
            "podSelector": {"matchLabels": dict(pod_labels)},
            "dataplane": {"port": dataplane_port, "minDeploymentInterval": min_deployment_interval},
            "templatingSettings": {"extraContext": {
                "ingressClass": ingress_class_name,
                "httpPort": http_port,
                "httpsPort": https_port,
                "statsPort": stats_port,
                "serverSlots": server_slots,
                # haproxy raises its FD limit to about 2 x maxconn; the library's 50000 needs a limit
                # a developer machine rarely grants.
                "maxconn": maxconn,
            }},
        },
    }


def expand_template_libraries(cr: Mapping[str, Any]) -> JSON:
    """``cr`` with the template libraries its annotation names merged into its spec, annotation removed.

    A real API server checks custom resources against the CRD schema, which requires
    ``spec.watchedResources`` and ``spec.haproxyConfig``: library-based configs are applied expanded."""
    result = expand_libraries(cr)
    metadata = result.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    annotations.pop(LIBRARIES_ANNOTATION, None)
    if not annotations:
        metadata.pop("annotations", None)
    return result


def service(name: str, ns: str, *, port: int = 80, target_port: int | str = "http") -> JSON:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name},
                     "ports": [{"name": "http", "port": port, "targetPort": target_port, "protocol": "TCP"}]}}


def endpoint_slice(service_name: str, ns: str, addresses: Sequence[str], port: int,
                   *, name: str | None = None) -> JSON:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name or f"{service_name}-local", "namespace": ns,
                     "labels": {"kubernetes.io/service-name": service_name}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}} for address in addresses],
    }


def ingress(name: str, ns: str, host: str, service_name: str, *, ingress_class_name: str = "haptic",
            path: str = "/", service_port: int = 80, annotations: Mapping[str, str] | None = None) -> JSON:
    metadata: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": metadata,
        "spec": {"ingressClassName": ingress_class_name, "rules": [{"host": host, "http": {"paths": [
            {"path": path, "pathType": "Prefix",
             "backend": {"service": {"name": service_name, "port": {"number": service_port}}}},
        ]}}]},
    }
