"""Server-side defaulting and normalisation of built-in types that controllers read back.

Secrets: ``stringData`` folds into base64 ``data``; ``data`` must be base64. Services: ``type``,
``clusterIP`` (allocated deterministically), port ``protocol`` and ``targetPort``. EndpointSlices:
port ``protocol``.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress

from haptic.k8s.api import JSON, ApiError, Invalid

from .resources import ResourceType

_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")


class ClusterIPs:
    """Hands out service addresses in order (10.96.0.1 is the API's own), so runs are reproducible."""

    def __init__(self) -> None:
        self._next = 2

    def allocate(self) -> str:
        address = str(_SERVICE_NET.network_address + self._next)
        self._next += 1
        return address


def _secret(obj: JSON) -> None:
    name = (obj.get("metadata") or {}).get("name", "")
    data = obj.get("data")
    if data is not None and not isinstance(data, dict):
        raise Invalid(f'Secret "{name}" is invalid: data: must be a map of base64 strings')
    data = dict(data or {})
    for key, value in data.items():
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError) as exc:
            # The value is not quoted: it is secret material.
            raise ApiError(400, "BadRequest", f'Secret "{name}": data[{key}] is not valid base64: {exc}') from exc
    string_data = obj.pop("stringData", None)
    if string_data is not None:
        if not isinstance(string_data, dict):
            raise Invalid(f'Secret "{name}" is invalid: stringData: must be a map of strings')
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    if data or "data" in obj:
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _ports(ports: object, default_target: bool) -> None:
    if not isinstance(ports, list):
        return
    for port in ports:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if default_target and "port" in port:
                port.setdefault("targetPort", port["port"])


def _service(obj: JSON, old: JSON | None, ips: ClusterIPs) -> None:
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
        raise Invalid(f'Service "{obj["metadata"].get("name", "")}" is invalid: spec.clusterIP: Invalid value: '
                      f'"{spec["clusterIP"]}": field is immutable')
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if spec["clusterIP"] != "None":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")


def apply_defaults(rt: ResourceType, obj: JSON, old: JSON | None, ips: ClusterIPs) -> None:
    """Defaults ``obj`` in place (``old`` is the stored version on updates)."""
    if rt.group == "" and rt.plural == "secrets":
        _secret(obj)
    elif rt.group == "" and rt.plural == "services":
        _service(obj, old, ips)
    elif rt.group == "discovery.k8s.io" and rt.plural == "endpointslices":
        _ports(obj.get("ports"), default_target=False)
