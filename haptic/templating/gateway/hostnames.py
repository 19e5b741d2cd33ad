"""Gateway API hostnames: ``*.example.com`` is a suffix match (any number of labels, never the apex)."""

from __future__ import annotations

from collections.abc import Sequence


def _suffix(wildcard: str) -> str:
    return wildcard[1:]  # "*.example.com" -> ".example.com"


def covers(pattern: str, host: str) -> bool:
    """Whether every name ``host`` stands for is also matched by ``pattern`` (both may be wildcards)."""
    if pattern == host:
        return True
    if not pattern.startswith("*."):
        return False
    suffix = _suffix(pattern)
    return host.endswith(suffix) and len(host) > len(suffix)


def intersect(listener: str | None, route: Sequence[str]) -> list[str]:
    """The hostnames a route serves through a listener: ``["*"]`` (any host) when neither names one;
    the more specific of each intersecting pair otherwise; empty when nothing intersects."""
    if not listener:
        return list(dict.fromkeys(route)) if route else ["*"]
    if not route:
        return [listener]
    out: dict[str, None] = {}
    for host in route:
        if covers(listener, host):
            out[host] = None
        elif covers(host, listener):
            out[listener] = None
    return list(out)


def specificity(host: str) -> tuple[int, int]:
    """Sort key, most specific first: exact names, then longer wildcard suffixes, then ``*``."""
    if host == "*":
        return (2, 0)
    if host.startswith("*."):
        return (1, -len(host))
    return (0, 0)
