"""Builders for admission tests: AdmissionReview bodies, Ingress objects, the example config."""

from __future__ import annotations

from typing import Any

from haptic.config.models import HAProxyTemplateConfig
from haptic.validation.config_file import read_config_file
from tests.support.paths import REPO

ROOT = REPO
INGRESS_EXAMPLE = ROOT / "examples" / "ingress" / "haproxytemplateconfig.yaml"
INGRESS_GVR = {"group": "networking.k8s.io", "version": "v1", "resource": "ingresses"}
INGRESS_GVK = {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"}


def ingress_example() -> HAProxyTemplateConfig:
    return read_config_file(INGRESS_EXAMPLE)


def ingress(
    name: str,
    namespace: str = "shop",
    host: str = "shop.example.test",
    path: str = "/",
    service: str = "web",
    port: int = 80,
    annotations: dict[str, str] | None = None,
    ingress_class: str = "haptic",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": namespace, "name": name}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta,
        "spec": {
            "ingressClassName": ingress_class,
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": path,
                                "pathType": "Prefix",
                                "backend": {"service": {"name": service, "port": {"number": port}}},
                            }
                        ]
                    },
                }
            ],
        },
    }


def review(
    operation: str,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    *,
    uid: str = "req-1",
    gvr: dict[str, str] | None = None,
    gvk: dict[str, str] | None = None,
    sub_resource: str | None = None,
) -> dict[str, Any]:
    source = obj if obj is not None else old
    meta = (source or {}).get("metadata") or {}
    if not isinstance(meta, dict):
        meta = {}
    request: dict[str, Any] = {
        "uid": uid,
        "kind": gvk or INGRESS_GVK,
        "resource": gvr or INGRESS_GVR,
        "requestKind": gvk or INGRESS_GVK,
        "requestResource": gvr or INGRESS_GVR,
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "operation": operation,
        "userInfo": {"username": "tester"},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }
    if sub_resource:
        request["subResource"] = sub_resource
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
