"""Renders a dialect library (``nginx``, ``haproxytech``) with ResourceStores and checks it with the real haproxy."""

from __future__ import annotations

import base64
import shutil
from types import SimpleNamespace
from typing import Any

from haptic.k8s.store import ResourceStore
from haptic.names import LIBRARIES_ANNOTATION
from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine, TemplateSet
from haptic.templating.libraries import expand_libraries
from haptic.validation.haproxy_check import HAProxyValidator

# SHA-512-crypt of "opensesame" (test data only)
HASH = "$6$migrate1$6KJS.mgt9qirboVOcUUozNPJXJ8tzdk/dFHKVdNDwwc62/y0yTfYsmqUfhlMLkEQJcHZoD6KuXGUHN4XoOZ2a."


def library_spec(name: str) -> dict[str, Any]:
    obj = {"metadata": {"annotations": {LIBRARIES_ANNOTATION: name}}, "spec": {"podSelector": {}}}
    return expand_libraries(obj)["spec"]


def engine_for(spec: dict[str, Any]) -> TemplateEngine:
    ns = SimpleNamespace(haproxy_config=spec["haproxyConfig"], template_snippets=spec["templateSnippets"],
                         maps=spec["maps"], files={}, ssl_certificates={})
    return TemplateEngine(TemplateSet.from_spec(ns))


def ingress(name: str, annotations: dict[str, str], host: str = "app.example.test", path: str = "/",
            path_type: str = "Prefix", service: str = "web", cls: str = "nginx", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"namespace": "ns", "name": name, "annotations": annotations,
                     "creationTimestamp": spec.pop("created", "2026-01-01T00:00:00Z")},
        "spec": {"ingressClassName": cls, "rules": [{"host": host, "http": {"paths": [
            {"path": path, "pathType": path_type, "backend": {"service": {"name": service, "port": {"number": 80}}}}
        ]}}], **spec},
    }


def service(name: str) -> list[dict[str, Any]]:
    return [
        {"kind": "Service", "metadata": {"namespace": "ns", "name": name}, "spec": {"ports": [{"port": 80}]}},
        {"kind": "EndpointSlice", "metadata": {"namespace": "ns", "name": f"{name}-1",
                                               "labels": {"kubernetes.io/service-name": name}},
         "ports": [{"port": 8080}], "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}]},
    ]


def opaque_secret(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"kind": "Secret", "type": "Opaque", "metadata": {"namespace": "ns", "name": name},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def stores_of(spec: dict[str, Any], *objects: dict[str, Any]) -> dict[str, ResourceStore]:
    stores = {name: ResourceStore(name, w["indexBy"], w.get("fieldSelector"), spec["watchedResourcesIgnoreFields"])
              for name, w in spec["watchedResources"].items()}
    kinds = {"Ingress": ["ingresses"], "Service": ["services"], "EndpointSlice": ["endpoints"],
             "Secret": ["secrets", "authsecrets"]}
    for obj in objects:
        for store in kinds[obj["kind"]]:
            if store in stores:
                stores[store].apply(obj)
    return stores


def render_stores(spec: dict[str, Any], engine: TemplateEngine, stores: dict[str, ResourceStore]) -> RenderResult:
    return engine.render(RenderInputs(stores=stores, extra_context=spec["templatingSettings"]["extraContext"]))


def render(spec: dict[str, Any], engine: TemplateEngine, *objects: dict[str, Any]) -> RenderResult:
    return render_stores(spec, engine, stores_of(spec, *objects))


def haproxy_check(result: RenderResult) -> tuple[bool, str]:
    binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    assert binary, "haproxy is needed: the library tests check the rendered config with the real haproxy -c"
    checked = HAProxyValidator(binary).validate(result.config, result.aux)
    return checked.valid, checked.output
