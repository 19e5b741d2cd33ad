"""GatewayClasses of this controller, their Gateways and listeners, and which Routes attach where.

All Gateways of the controller's classes share the HAProxy pods: one frontend per listener port. A
listener is refused (``Accepted: False``) for a protocol other than HTTP/HTTPS (``UnsupportedProtocol``),
TLS passthrough, a port the other frontends use (``PortUnavailable``), or a port an older Gateway's
listener uses with the other protocol (``ProtocolConflict``) or with the same hostname
(``HostnameConflict``, ``Conflicted: True``). An HTTPS listener needs at least one usable certificate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from haptic.k8s.selectors import LabelSelector
from haptic.templating.gateway.conditions import age_key, condition, generation_of
from haptic.templating.gateway.hostnames import intersect
from haptic.templating.gateway.refs import GATEWAY_GROUP, Grants
from haptic.templating.gateway.safety import gateway_problems

SUPPORTED_PROTOCOLS = ("HTTP", "HTTPS")
ROUTE_KINDS = ("HTTPRoute", "GRPCRoute")


@dataclass(frozen=True)
class Certificate:
    namespace: str
    name: str
    secret: Any


@dataclass
class Listener:
    gateway: Any
    index: int
    name: str
    port: int
    protocol: str
    hostname: str | None
    allowed: Mapping[str, Any]
    kinds: list[dict[str, str]]
    #: (condition type) -> (ok, reason, message) beyond the defaults
    problems: dict[str, tuple[bool, str, str]] = field(default_factory=dict)
    certificates: list[Certificate] = field(default_factory=list)
    attached: dict[tuple[str, str], None] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return str(self.gateway["metadata"].get("namespace") or "")

    @property
    def usable(self) -> bool:
        """Accepted and programmed: it gets a bind and routes."""
        return not any(kind in self.problems for kind in ("Accepted", "Programmed")) and \
            not self.problems.get("Conflicted", (False,))[0]

    def allows_namespace(self, namespace: str, labels: Mapping[str, str] | None) -> bool:
        spec = self.allowed.get("namespaces") or {}
        origin = spec.get("from") or "Same"
        if origin == "All":
            return True
        if origin == "Selector":
            return LabelSelector.from_object(spec.get("selector") or {}).matches(labels or {})
        return namespace == self.namespace

    def allows_kind(self, kind: str) -> bool:
        return any(k["kind"] == kind for k in self.kinds)

    def status(self) -> dict[str, Any]:
        gen = generation_of(self.gateway)
        conds = []
        for kind, ok_reason in (("Accepted", "Accepted"), ("Programmed", "Programmed"),
                                ("ResolvedRefs", "ResolvedRefs")):
            ok, reason, message = self.problems.get(kind, (True, ok_reason, f"listener {kind.lower()}"))
            conds.append(condition(kind, ok, reason, message, gen))
        conflicted, reason, message = self.problems.get("Conflicted", (False, "NoConflicts", "no conflicts"))
        conds.append(condition("Conflicted", conflicted, reason, message, gen))
        return {"name": self.name, "supportedKinds": [dict(k) for k in self.kinds],
                "attachedRoutes": len(self.attached), "conditions": conds}


@dataclass
class Gateway:
    obj: Any
    listeners: list[Listener]
    problem: tuple[str, str] | None = None  # (reason, message): not accepted at all

    @property
    def key(self) -> tuple[str, str]:
        meta = self.obj["metadata"]
        return (str(meta.get("namespace") or ""), str(meta.get("name")))


def _supported_kinds(listener: Mapping[str, Any]) -> tuple[list[dict[str, str]], bool]:
    """The kinds a listener accepts (of those asked) and whether it asked for one not supported."""
    wanted = (listener.get("allowedRoutes") or {}).get("kinds")
    if not wanted:
        return [{"group": GATEWAY_GROUP, "kind": k} for k in ROUTE_KINDS], False
    kinds, invalid = [], False
    for item in wanted:
        if (item.get("group") or GATEWAY_GROUP) == GATEWAY_GROUP and item.get("kind") in ROUTE_KINDS:
            kinds.append({"group": GATEWAY_GROUP, "kind": str(item["kind"])})
        else:
            invalid = True
    return kinds, invalid


def _certificates(listener: Listener, spec: Mapping[str, Any], grants: Grants, secrets: Any,
                  usable_secret: Any) -> None:
    tls = spec.get("tls") or {}
    if (tls.get("mode") or "Terminate") != "Terminate":
        listener.problems["Accepted"] = (False, "UnsupportedProtocol", "TLS mode Passthrough is not supported")
        listener.problems["Programmed"] = (False, "Invalid", "TLS mode Passthrough is not supported")
        return
    for ref in tls.get("certificateRefs") or []:
        group, kind = ref.get("group") or "", ref.get("kind") or "Secret"
        namespace, name = str(ref.get("namespace") or listener.namespace), str(ref.get("name") or "")
        where = f"certificateRef {namespace}/{name}"
        if group != "" or kind != "Secret":
            listener.problems.setdefault("ResolvedRefs", (False, "InvalidCertificateRef",
                                                          f"{where}: only core Secrets are supported"))
            continue
        if not grants.permits("Gateway", listener.namespace, "", "Secret", namespace, name):
            listener.problems.setdefault("ResolvedRefs", (False, "RefNotPermitted",
                                                          f"{where}: no ReferenceGrant in {namespace} allows it"))
            continue
        secret = secrets.get_single(namespace, name) if secrets is not None else None
        problem = "Secret not found" if not secret else usable_secret(secret)
        if problem:
            listener.problems.setdefault("ResolvedRefs", (False, "InvalidCertificateRef", f"{where}: {problem}"))
            continue
        listener.certificates.append(Certificate(namespace, name, secret))
    if not listener.certificates:
        listener.problems["Programmed"] = (False, "Invalid", "no usable certificate")


def build_gateways(gateways: Iterable[Any], class_names: set[str], grants: Grants, secrets: Any, usable_secret: Any,
                   reserved_ports: Mapping[int, str]) -> tuple[list[Gateway], list[tuple[Any, str]]]:
    """The Gateways of the accepted classes (oldest first) with their listeners checked, and the unsafe
    ones left out (each with its problems)."""
    out: list[Gateway] = []
    unsafe: list[tuple[Any, str]] = []
    ports: dict[int, list[Listener]] = {}
    for obj in sorted((g for g in gateways if (g.get("spec") or {}).get("gatewayClassName") in class_names),
                      key=age_key):
        problems = gateway_problems(obj)
        if problems:
            unsafe.append((obj, "; ".join(problems)))
            continue
        spec = obj.get("spec") or {}
        gateway = Gateway(obj, [])
        if spec.get("addresses"):
            gateway.problem = ("UnsupportedAddress", "spec.addresses is not supported: the Gateway's addresses "
                                                     "are those of the HAProxy pods")
        for index, item in enumerate(spec.get("listeners") or []):
            kinds, invalid_kinds = _supported_kinds(item)
            listener = Listener(obj, index, str(item.get("name")), int(item.get("port")),
                                str(item.get("protocol")), item.get("hostname") or None,
                                item.get("allowedRoutes") or {"namespaces": {"from": "Same"}}, kinds)
            gateway.listeners.append(listener)
            if invalid_kinds:
                listener.problems["ResolvedRefs"] = (False, "InvalidRouteKinds",
                                                     "allowedRoutes.kinds: only HTTPRoute and GRPCRoute are supported")
            if listener.protocol not in SUPPORTED_PROTOCOLS:
                listener.problems["Accepted"] = (False, "UnsupportedProtocol",
                                                 f"protocol {listener.protocol} is not supported (HTTP, HTTPS)")
                listener.problems["Programmed"] = (False, "Invalid", "the listener is not accepted")
                continue
            if listener.port in reserved_ports:
                message = f"port {listener.port} is used by {reserved_ports[listener.port]}"
                listener.problems["Accepted"] = (False, "PortUnavailable", message)
                listener.problems["Programmed"] = (False, "Invalid", message)
                continue
            if listener.protocol == "HTTPS":
                _certificates(listener, item, grants, secrets, usable_secret)
            _check_conflicts(listener, ports.setdefault(listener.port, []))
            if gateway.problem is None:
                ports[listener.port].append(listener)
        out.append(gateway)
    return out, unsafe


def _check_conflicts(listener: Listener, same_port: list[Listener]) -> None:
    for other in same_port:
        if other.protocol != listener.protocol:
            listener.problems["Conflicted"] = (True, "ProtocolConflict",
                                               f"port {listener.port} is an {other.protocol} listener of Gateway "
                                               f"{other.namespace}/{other.gateway['metadata']['name']}")
            break
        if (other.hostname or "") == (listener.hostname or ""):
            listener.problems["Conflicted"] = (True, "HostnameConflict",
                                               f"port {listener.port} hostname {listener.hostname or '*'} is served "
                                               f"by listener {other.name} of Gateway "
                                               f"{other.namespace}/{other.gateway['metadata']['name']}")
            break
    if "Conflicted" in listener.problems:
        listener.problems["Programmed"] = (False, "Invalid", listener.problems["Conflicted"][2])


def gateway_status(gateway: Gateway, addresses: list[dict[str, str]]) -> dict[str, Any]:
    gen = generation_of(gateway.obj)
    programmed = [item for item in gateway.listeners if item.usable]
    if gateway.problem is not None:
        reason, message = gateway.problem
        accepted = condition("Accepted", False, reason, message, gen)
        ready = condition("Programmed", False, "AddressNotUsable" if reason == "UnsupportedAddress" else "Invalid",
                          message, gen)
    else:
        invalid = [item.name for item in gateway.listeners if not item.usable]
        accepted = condition("Accepted", True, "ListenersNotValid" if invalid else "Accepted",
                             f"listeners not valid: {', '.join(invalid)}" if invalid else "accepted", gen)
        ready = condition("Programmed", bool(programmed), "Programmed" if programmed else "Invalid",
                          "programmed in HAProxy" if programmed else "no listener could be programmed", gen)
    return {"addresses": addresses if gateway.problem is None else [], "conditions": [accepted, ready],
            "listeners": [item.status() for item in gateway.listeners]}


def route_hostnames(listener: Listener, hostnames: list[str]) -> list[str]:
    return intersect(listener.hostname, hostnames)
