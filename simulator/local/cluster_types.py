"""Resource types a local stack serves beyond the fake API's built-in table: RBAC, so that the
manifests under ``deploy/`` apply to it unchanged (objects are stored, not enforced)."""

from __future__ import annotations

from simulator.kube.resources import BUILTIN_TYPES, ResourceType


def _rbac(kind: str, plural: str, namespaced: bool) -> ResourceType:
    return ResourceType("rbac.authorization.k8s.io", "v1", kind, plural, namespaced, kind.lower(),
                        list_kind=kind + "List")


RBAC_TYPES: tuple[ResourceType, ...] = (
    _rbac("Role", "roles", True),
    _rbac("RoleBinding", "rolebindings", True),
    _rbac("ClusterRole", "clusterroles", False),
    _rbac("ClusterRoleBinding", "clusterrolebindings", False),
)

LOCAL_TYPES: tuple[ResourceType, ...] = (*BUILTIN_TYPES, *RBAC_TYPES)
