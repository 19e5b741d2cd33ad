"""The load balancer addresses statuses publish (Ingress ``status.loadBalancer``, Gateway
``status.addresses``): ``--publish-address`` when set, else the IPs of the HAProxy pods that run.
Pure functions; no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def published_addresses(pods: Iterable[Any], publish_address: Any = "") -> list[str]:
    """``publish_address`` when set, else the IPs of the running, not terminating HAProxy pods (sorted)."""
    if publish_address:
        return [str(publish_address)]
    ips = set()
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("podIP") and status.get("phase") == "Running" \
                and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            ips.add(str(status["podIP"]))
    return sorted(ips)


def is_hostname(address: str) -> bool:
    """A name (its last label is not numeric), not an IPv4 or IPv6 address."""
    return not any(ch.isdigit() for ch in address.split(".")[-1]) and ":" not in address
