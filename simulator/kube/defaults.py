"""Server-side defaulting and normalisation of built-in types that controllers read back.

Secrets: ``stringData`` folds into base64 ``data``; ``data`` must be base64. Services: ``type``,
``clusterIP`` (allocated deterministically), traffic policies, node ports (NodePort/LoadBalancer), port
``protocol`` and ``targetPort``. EndpointSlices:
port ``protocol``.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress

from haptic.k8s.api import JSON

from .field_errors import Raw, invalid_value
from .gofmt import go_strings
from .resources import ResourceType
from .validation import invalid, undecodable

_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")


class ClusterIPs:
    """Hands out service addresses in order (10.96.0.1 is the API's own), so runs are reproducible."""

    def __init__(self) -> None:
        self._next = 2
        self._node_ports = 0

    def allocate(self) -> str:
        address = str(_SERVICE_NET.network_address + self._next)
        self._next += 1
        return address

    def node_port(self) -> int:
        """Node ports in order from the default range's start (30000-32767)."""
        self._node_ports += 1
        return 29999 + self._node_ports


def _secret(rt: ResourceType, obj: JSON) -> None:
    data = obj.get("data")
    if data is not None and not isinstance(data, dict):
        raise undecodable(rt, "json: cannot unmarshal string into Go struct field Secret.data of type "
                              "map[string][]uint8")
    data = dict(data or {})
    for value in data.values():
        if value is None:
            continue
        try:
            decoded = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            # The value is not quoted: it is secret material.
            raise undecodable(rt, f"illegal base64 data at input byte {_bad_base64_offset(str(value))}") from None
        del decoded
    string_data = obj.pop("stringData", None)
    if string_data is not None:
        if not isinstance(string_data, dict):
            raise undecodable(rt, "json: cannot unmarshal string into Go struct field Secret.stringData of type "
                                  "map[string]string")
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    if data or "data" in obj:
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _bad_base64_offset(text: str) -> int:
    """Where Go's base64 decoder gives up on ``text`` (the byte offset of ``illegal base64 data``)."""
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for index, char in enumerate(text):
        if char == "=":
            return index if len(text) % 4 or index < len(text) - 2 else len(text)
        if char not in alphabet:
            return index
    return len(text) - len(text) % 4 if len(text) % 4 else len(text)


def _ports(ports: object, default_target: bool) -> None:
    if not isinstance(ports, list):
        return
    for port in ports:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if default_target and "port" in port:
                port.setdefault("targetPort", port["port"])


def _service(rt: ResourceType, obj: JSON, old: JSON | None, ips: ClusterIPs) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    _ports(spec.get("ports"), default_target=True)
    if spec["type"] == "ExternalName":
        return
    previous = ((old or {}).get("spec") or {}).get("clusterIP")
    if not spec.get("clusterIP"):
        spec["clusterIP"] = previous or ips.allocate()
    elif previous and spec["clusterIP"] != previous:
        ips_now = [spec["clusterIP"]]
        raise invalid(rt, obj["metadata"].get("name", ""), [invalid_value(
            "spec.clusterIPs[0]", Raw(go_strings(ips_now)), "may not change once set")])
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if spec["clusterIP"] != "None":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
        if spec["type"] == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)
        before = {p.get("port"): p.get("nodePort") for p in ((old or {}).get("spec") or {}).get("ports") or []
                  if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                port["nodePort"] = before.get(port.get("port")) or ips.node_port()


def apply_defaults(rt: ResourceType, obj: JSON, old: JSON | None, ips: ClusterIPs) -> None:
    """Defaults ``obj`` in place (``old`` is the stored version on updates)."""
    if rt.group == "" and rt.plural == "secrets":
        _secret(rt, obj)
    elif rt.group == "" and rt.plural == "services":
        _service(rt, obj, old, ips)
    elif rt.group == "discovery.k8s.io" and rt.plural == "endpointslices":
        _ports(obj.get("ports"), default_target=False)
