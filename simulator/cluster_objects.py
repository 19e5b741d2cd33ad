"""Builders for the Kubernetes objects simulations use: HAProxy pods, Ingresses, EndpointSlices,
Services, the credentials Secret and a small HAProxyTemplateConfig whose backends use server slots
(so that scaling endpoints is a runtime-only change)."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

JSON = dict[str, Any]

DATAPLANE_PORT = 5555
POD_LABELS: Mapping[str, str] = {"app": "haproxy"}

SLOT_TEMPLATE = """global
    log stdout format raw local0

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend http
    bind :8080
{% for ing in resources.ingresses.list() %}
{% for rule in ing.spec.rules %}
{% set be = "be_" ~ ing.metadata.namespace ~ "_" ~ ing.metadata.name ~ "_" ~ loop.index %}
    use_backend {{ be }} if { hdr(host) -i {{ rule.host }} }
{% endfor %}
{% endfor %}
{% for ing in resources.ingresses.list() %}
{% for rule in ing.spec.rules %}
{% set svc = rule.http.paths[0].backend.service %}
{% set ns = namespace(addrs=[], port=80) %}
{% for slice in resources.endpoints.fetch(ing.metadata.namespace, svc.name) %}
{% for p in slice.ports or [] %}{% set ns.port = p.port %}{% endfor %}
{% for ep in slice.endpoints or [] %}
{% for a in ep.addresses %}{% set ns.addrs = ns.addrs + [a] %}{% endfor %}
{% endfor %}
{% endfor %}
{% set addrs = ns.addrs | sort %}

backend be_{{ ing.metadata.namespace }}_{{ ing.metadata.name }}_{{ loop.index }}
{% for i in range(extraContext.slots | default(10)) %}
{% if i < addrs | length %}
    server SRV_{{ i + 1 }} {{ addrs[i] }}:{{ ns.port }}
{% else %}
    server SRV_{{ i + 1 }} 127.0.0.1:1 disabled
{% endif %}
{% endfor %}
{% endfor %}
{% endfor %}
"""


def template_config(name: str = "haproxy-config", namespace: str = "haptic", *, template: str = SLOT_TEMPLATE,
                    slots: int = 10, secret_name: str = "haproxy-credentials", leader_election: bool = True,
                    drift_interval: str = "60s", min_deployment_interval: str = "2s",
                    extra_spec: Mapping[str, Any] | None = None) -> JSON:
    spec: JSON = {
        "credentialsSecretRef": {"name": secret_name},
        "podSelector": {"matchLabels": dict(POD_LABELS)},
        "controller": {"leaderElection": {"enabled": leader_election}},
        "dataplane": {"port": DATAPLANE_PORT, "driftPreventionInterval": drift_interval,
                      "minDeploymentInterval": min_deployment_interval},
        "templatingSettings": {"extraContext": {"slots": slots}},
        "watchedResourcesIgnoreFields": ["metadata.managedFields"],
        "watchedResources": {
            "ingresses": {"apiVersion": "networking.k8s.io/v1", "resources": "ingresses",
                          "indexBy": ["metadata.namespace", "metadata.name"]},
            "endpoints": {"apiVersion": "discovery.k8s.io/v1", "resources": "endpointslices",
                          "indexBy": ["metadata.namespace", "metadata.labels['kubernetes.io/service-name']"]},
        },
        "haproxyConfig": {"template": template},
    }
    spec.update(dict(extra_spec or {}))
    return {"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def credentials_secret(username: str, password: str, name: str = "haproxy-credentials",
                       namespace: str = "haptic") -> JSON:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "type": "Opaque", "data": {"dataplane_username": b64(username), "dataplane_password": b64(password)}}


def haproxy_pod(name: str, ip: str, namespace: str = "haptic", *, ready: bool = True) -> JSON:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(POD_LABELS)},
        "spec": {"containers": [
            {"name": "haproxy", "image": "haproxy:2.6", "ports": [{"containerPort": 8080}]},
            {"name": "dataplane", "image": "dataplaneapi", "ports": [{"containerPort": DATAPLANE_PORT}]},
        ]},
        "status": {"phase": "Running", "podIP": ip, "containerStatuses": [
            {"name": "haproxy", "ready": ready}, {"name": "dataplane", "ready": ready}]},
    }


def ingress(name: str, host: str, service: str, namespace: str = "default", port: int = 80) -> JSON:
    return {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"ingressClassName": "haptic", "rules": [{"host": host, "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": service, "port": {"number": port}}}}
        ]}}]},
    }


def endpoint_slice(service: str, addresses: Sequence[str], namespace: str = "default", port: int = 8080,
                   name: str | None = None) -> JSON:
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": name or f"{service}-slice", "namespace": namespace,
                     "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addresses],
    }
