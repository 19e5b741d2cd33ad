"""API groups Kubernetes serves itself; any other group a config watches is backed by a CRD."""

from __future__ import annotations

BUILTIN_GROUPS = frozenset({
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io",
    "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io",
})


def is_builtin_group(group: str) -> bool:
    """``gateway.networking.k8s.io`` is not built in, although it ends like ``networking.k8s.io``."""
    return group in BUILTIN_GROUPS
