"""CRD-backed watched resources: which CRDs a config depends on and what of a CRD counts as a change."""

from __future__ import annotations

from typing import Any

from haptic.config.models import load_config
from haptic.controller.watch.crd_watch import CrdState, crd_backed
from haptic.k8s.builtin_groups import is_builtin_group
from haptic.preflight.permissions import required_permissions


def spec(**watched: str) -> Any:
    return load_config({
        "credentialsSecretRef": {"name": "creds"},
        "podSelector": {"matchLabels": {"app": "haproxy"}},
        "watchedResources": {key: {"apiVersion": api, "resources": key.split("-")[0], "indexBy": ["metadata.name"]}
                             for key, api in watched.items()},
        "haproxyConfig": {"template": "global\n"},
    }).spec


def crd(versions: dict[str, bool], generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": "widgets.example.com", "generation": generation},
            "spec": {"versions": [{"name": n, "served": s} for n, s in versions.items()]}}


def test_only_groups_kubernetes_does_not_serve_itself_are_crd_backed() -> None:
    found = crd_backed(spec(**{"ingresses": "networking.k8s.io/v1", "services": "v1",
                               "httproutes": "gateway.networking.k8s.io/v1", "widgets": "example.com/v1",
                               "widgets-old": "example.com/v1beta1"}))
    assert found == {"httproutes.gateway.networking.k8s.io": {"httproutes": "v1"},
                     "widgets.example.com": {"widgets": "v1", "widgets-old": "v1beta1"}}
    assert is_builtin_group("networking.k8s.io") and not is_builtin_group("gateway.networking.k8s.io")


def test_a_crd_state_is_its_served_versions_and_generation() -> None:
    assert CrdState.of(crd({"v1": True, "v1beta1": False})) == CrdState(frozenset({"v1"}), 1)
    assert CrdState.of(crd({"v1": True}, generation=2)) != CrdState.of(crd({"v1": True}))
    assert CrdState().describe() == "absent"
    assert CrdState.of(crd({"v1": True})).describe() == "serving v1"


def test_a_config_with_a_crd_backed_resource_needs_to_watch_crds() -> None:
    def crd_permissions(s: Any) -> set[str]:
        return {p.verb for p in required_permissions(s, namespace="ns", config_name="c", secret_name="s",
                                                     webhook=False)
                if p.resource == "customresourcedefinitions"}

    assert crd_permissions(spec(widgets="example.com/v1")) == {"list", "watch"}
    assert crd_permissions(spec(ingresses="networking.k8s.io/v1")) == set()


def test_a_namespace_selector_needs_to_watch_namespaces() -> None:
    s = spec(ingresses="networking.k8s.io/v1")
    s.watched_resources["ingresses"].namespace_selector = "team=a"
    needed = {(p.verb, p.resource) for p in required_permissions(s, namespace="ns", config_name="c",
                                                                  secret_name="s", webhook=False)}
    assert {("list", "namespaces"), ("watch", "namespaces")} <= needed
