from __future__ import annotations

import copy
from typing import Any

import pytest

MINIMAL_SPEC: dict[str, Any] = {
    "credentialsSecretRef": {"name": "haproxy-credentials"},
    "podSelector": {"matchLabels": {"app": "haproxy"}},
    "watchedResources": {
        "ingresses": {
            "apiVersion": "networking.k8s.io/v1",
            "resources": "ingresses",
            "indexBy": ["metadata.namespace", "metadata.name"],
        }
    },
    "haproxyConfig": {"template": "global\n  daemon\n"},
}


@pytest.fixture
def spec() -> dict[str, Any]:
    """A fresh minimal valid spec that a test may mutate."""
    return copy.deepcopy(MINIMAL_SPEC)


@pytest.fixture
def cr(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "haproxy-haptic.org/v1alpha1",
        "kind": "HAProxyTemplateConfig",
        "metadata": {"name": "haproxy-config", "namespace": "haptic"},
        "spec": spec,
    }
