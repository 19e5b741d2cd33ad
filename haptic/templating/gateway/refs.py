"""References across namespaces (ReferenceGrant) and the resolution of backendRefs to Services.

A reference from an object in one namespace to an object in another is allowed only when a
ReferenceGrant in the *target* namespace lists the referring kind and namespace in ``from`` and the
target kind (and name, when it gives one) in ``to``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

GATEWAY_GROUP = "gateway.networking.k8s.io"


class Grants:
    """The ReferenceGrants of the cluster, by namespace."""

    def __init__(self, grants: Iterable[Any]) -> None:
        self._by_namespace: dict[str, list[Mapping[str, Any]]] = {}
        for grant in grants:
            if isinstance(grant, Mapping):
                namespace = str((grant.get("metadata") or {}).get("namespace") or "")
                self._by_namespace.setdefault(namespace, []).append(grant.get("spec") or {})

    def permits(self, from_kind: str, from_namespace: str, to_group: str, to_kind: str, to_namespace: str,
                to_name: str) -> bool:
        if from_namespace == to_namespace:
            return True
        for spec in self._by_namespace.get(to_namespace, ()):
            if not any(f.get("group") == GATEWAY_GROUP and f.get("kind") == from_kind
                       and f.get("namespace") == from_namespace for f in spec.get("from") or []):
                continue
            for target in spec.get("to") or []:
                if (target.get("group") or "") == to_group and target.get("kind") == to_kind \
                        and target.get("name") in (None, "", to_name):
                    return True
        return False


class Backend(NamedTuple):
    """A Service port a rule forwards to: its HAProxy backend name and where its endpoints come from (a named
    tuple: a startup builds one per backendRef, and a frozen dataclass costs several times as much)."""

    name: str
    namespace: str
    service: str
    port: int
    #: HTTP/2 without TLS to the servers (GRPCRoute backends)
    h2c: bool = False
    #: the Service (store) object the backendRef resolved to
    service_object: Any = None


class ResolvedRef(NamedTuple):
    """One backendRef of a rule: its backend (None: invalid, answered 500), weight, and why it is invalid."""

    backend: Backend | None
    weight: int
    reason: str = ""
    message: str = ""


def backend_name(namespace: str, service: str, port: int, h2c: bool = False) -> str:
    return f"gw_{'h2c_' if h2c else ''}{namespace}_{service}_{port}"


def resolve_backend_ref(ref: Mapping[str, Any], route_namespace: str, route_kind: str, grants: Grants,
                        services: Any) -> ResolvedRef:
    """A backendRef checked as the spec's ``ResolvedRefs`` condition requires (InvalidKind, RefNotPermitted,
    BackendNotFound). ``services``: a store with ``get_single(namespace, name)``."""
    weight = ref.get("weight", 1)
    weight = weight if isinstance(weight, int) else 1
    group, kind = ref.get("group") or "", ref.get("kind") or "Service"
    name = str(ref.get("name") or "")
    namespace = str(ref.get("namespace") or route_namespace)
    where = f"{kind} {namespace}/{name}"
    if group != "" or kind != "Service":
        return ResolvedRef(None, weight, "InvalidKind", f"backendRef {where}: only core Services are supported")
    if not grants.permits(route_kind, route_namespace, "", "Service", namespace, name):
        return ResolvedRef(None, weight, "RefNotPermitted",
                           f"backendRef {where}: no ReferenceGrant in namespace {namespace} allows it")
    service = services.get_single(namespace, name) if services is not None else None
    if not service:
        return ResolvedRef(None, weight, "BackendNotFound", f"backendRef {where}: Service not found")
    port = ref.get("port")
    # the exact type first: store objects are dicts, and the ABC check costs more than the lookup
    ports = [p.get("port") for p in (service.get("spec") or {}).get("ports") or []
             if type(p) is dict or isinstance(p, Mapping)]
    if not isinstance(port, int) or port not in ports:
        return ResolvedRef(None, weight, "BackendNotFound", f"backendRef {where}: the Service has no port {port}")
    h2c = route_kind == "GRPCRoute"
    return ResolvedRef(Backend(backend_name(namespace, name, port, h2c), namespace, name, port, h2c, service),
                       weight)
