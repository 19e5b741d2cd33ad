"""Builders for the Kubernetes objects simulations use: HAProxy pods, Ingresses, EndpointSlices,
Services, the credentials Secret, a small HAProxyTemplateConfig whose backends use server slots
(so that scaling endpoints is a runtime-only change) and ``ingress_library_config``: the shipped
example (``examples/ingress/haproxytemplateconfig.yaml``, built on the Ingress template library)
adapted to a simulated cluster."""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from haptic.names import GROUP_VERSION
from simulator.local.objects import expand_template_libraries

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
    return {"apiVersion": GROUP_VERSION, "kind": "HAProxyTemplateConfig",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_INGRESS_CONFIG = EXAMPLES / "ingress" / "haproxytemplateconfig.yaml"


@cache
def _example_config(library: str) -> JSON:
    loaded: JSON = yaml.safe_load((EXAMPLES / library / "haproxytemplateconfig.yaml").read_text(encoding="utf-8"))
    return loaded


def ingress_library_config(name: str = "haproxy-config", namespace: str = "haptic", *, slots: int = 10,
                           secret_name: str = "haproxy-credentials", leader_election: bool = True,
                           drift_interval: str = "60s", min_deployment_interval: str = "2s",
                           validation_tests: bool = False, extra_context: Mapping[str, Any] | None = None,
                           extra_spec: Mapping[str, Any] | None = None, expanded: bool = True,
                           example: str = "ingress") -> JSON:
    """The example Ingress config (``example="gateway"``: the Gateway API one, examples/gateway/) with the
    simulator's name, namespace, pod labels, Dataplane port and timings, its template library merged in as a
    real API server needs it (the CRD requires what the library supplies; ``expanded=False`` keeps the
    annotation instead, for the controller's own expansion). Its ``validationTests`` are dropped unless
    asked for (the controller does not run them)."""
    doc = copy.deepcopy(_example_config(example))
    annotations = dict((doc.get("metadata") or {}).get("annotations") or {})
    doc["metadata"] = {"name": name, "namespace": namespace, "annotations": annotations}
    spec: JSON = doc["spec"]
    spec["credentialsSecretRef"] = {"name": secret_name}
    spec["podSelector"] = {"matchLabels": dict(POD_LABELS)}
    spec["controller"] = {"leaderElection": {"enabled": leader_election}}
    spec.setdefault("dataplane", {}).update({"port": DATAPLANE_PORT, "driftPreventionInterval": drift_interval,
                                             "minDeploymentInterval": min_deployment_interval})
    context = spec.setdefault("templatingSettings", {}).setdefault("extraContext", {})
    context["serverSlots"] = slots
    context.update(dict(extra_context or {}))
    if not validation_tests:
        spec.pop("validationTests", None)
    spec.update(copy.deepcopy(dict(extra_spec or {})))
    return expand_template_libraries(doc) if expanded else doc


def service(name: str, namespace: str = "default", port: int = 80, target_port: int = 8080,
            port_name: str = "http") -> JSON:
    return {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
        "spec": {"ports": [{"name": port_name, "port": port, "targetPort": target_port, "protocol": "TCP"}]},
    }


def tls_secret(name: str, cert_pem: str, key_pem: str, namespace: str = "default") -> JSON:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "type": "kubernetes.io/tls", "data": {"tls.crt": b64(cert_pem), "tls.key": b64(key_pem)}}


def credentials_secret(username: str, password: str, name: str = "haproxy-credentials",
                       namespace: str = "haptic") -> JSON:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "type": "Opaque", "data": {"dataplane_username": b64(username), "dataplane_password": b64(password)}}


def dataplane_password(obj: Mapping[str, Any], name: str, namespace: str) -> str | None:
    """The Dataplane password a credentials Secret ``namespace/name`` sets (``stringData`` wins over
    ``data``, as the API server merges them), None when ``obj`` is another object or sets none."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") != "Secret" or meta.get("name") != name or (meta.get("namespace") or "default") != namespace:
        return None
    password = (obj.get("stringData") or {}).get("dataplane_password")
    encoded = (obj.get("data") or {}).get("dataplane_password")
    if password is None and encoded is not None:
        password = base64.b64decode(str(encoded)).decode("utf-8")
    return None if password is None else str(password)


def lease_handed_to(lease: Mapping[str, Any], holder: str, now: str) -> JSON:
    """``lease`` as a foreign write hands it to ``holder`` at ``now`` (a MicroTime): acquired and
    renewed now, one more transition."""
    spec = dict(lease.get("spec") or {})
    spec.update(holderIdentity=holder, acquireTime=now, renewTime=now,
                leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1)
    return {**lease, "spec": spec}


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


def ingress(name: str, host: str, service: str, namespace: str = "default", port: int = 80, *,
            path: str = "/", tls_secret: str | None = None, annotations: Mapping[str, str] | None = None) -> JSON:
    obj: JSON = {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"ingressClassName": "haptic", "rules": [{"host": host, "http": {"paths": [
            {"path": path, "pathType": "Prefix", "backend": {"service": {"name": service, "port": {"number": port}}}}
        ]}}]},
    }
    if tls_secret is not None:
        obj["spec"]["tls"] = [{"hosts": [host], "secretName": tls_secret}]
    if annotations:
        obj["metadata"]["annotations"] = dict(annotations)
    return obj


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
