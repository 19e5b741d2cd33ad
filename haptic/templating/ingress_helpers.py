"""Helpers for Ingress templates: the flat list of an Ingress's routes, computed once in Python.

Walking ``spec.rules[].http.paths[]`` and building backend names in Jinja costs several sandboxed
lookups per path; the Ingress library renders tens of thousands of them, so the walk lives here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard

from haptic.templating.list_memo import same_call

DEFAULT = "Default"
REGEX = "Regex"
# The library's own annotations read here (the rest are read by the templates).
PATH_REGEX = "haproxy-haptic.org/path-regex"
CANARY_SERVICE = "haproxy-haptic.org/canary-service"
CANARY_WEIGHT = "haproxy-haptic.org/canary-weight"
SSL_PASSTHROUGH = "haproxy-haptic.org/ssl-passthrough"


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # store objects are plain dicts: the exact type test first, the (slower) ABC check for anything else
    return type(value) is dict or isinstance(value, Mapping)


def _backend_name(prefix: str, service: Mapping[str, Any]) -> str:
    port = service.get("port") or {}
    return f"{prefix}{service.get('name')}_{port.get('number') or port.get('name')}"


def _host_pattern(host: str) -> str:
    # Map files take the key literally up to the first blank: no backslash escapes, so classes instead.
    return "".join("[.]" if c == "." else "[*]" if c == "*" else c for c in host)


def as_regex(route: dict[str, Any]) -> None:
    """Makes ``route`` a ``Regex`` one: ``regex`` matches the path, ``map_key`` host + path (case-insensitive)."""
    route["type"] = REGEX
    route["regex"] = f"(?i)^(?:{route['path']})"
    route["map_key"] = f"(?i)^{_host_pattern(route['host'])}(?:{route['path']})"


def _annotations(ingress: Mapping[str, Any]) -> Mapping[str, Any]:
    return (ingress.get("metadata") or {}).get("annotations") or {}


def ingress_routes(ingress: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``ingress_paths`` where ``haproxy-haptic.org/path-regex: "true"`` makes ImplementationSpecific paths
    regular expressions (type ``Regex``, see ``as_regex``)."""
    routes = ingress_paths(ingress)
    if _annotations(ingress).get(PATH_REGEX) == "true":
        for route in routes:
            if route["type"] == "ImplementationSpecific":
                as_regex(route)
    return routes


def regex_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``Regex`` routes of ``ingresses`` (``ingress_routes``), longest ``map_key`` first, each key once:
    the frontends try them in this order, before they know the backends."""
    return same_call("regex_routes", ingresses, None, _regex_routes)


def _regex_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for ingress in ingresses:
        if _annotations(ingress).get(PATH_REGEX) != "true":
            continue
        for route in ingress_routes(ingress):
            if route["type"] == REGEX:
                found.setdefault(route["map_key"], route)
    return sorted(found.values(), key=lambda r: -len(r["map_key"]))


def weighted_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per backend of an Ingress with ``haproxy-haptic.org/canary-service`` and a ``canary-weight``
    above 0: ``main`` (its backend), ``backend`` (the canary Service's backend, same port), ``service`` (the
    canary's service reference), ``weight`` (0..100, the percentage of ``main``'s requests sent to it) and
    ``type`` ``Canary`` (a backend of the Ingress, never a route)."""
    return same_call("weighted_routes", ingresses, None, canary_routes)


def canary_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``weighted_routes`` without its memo (one Ingress's: its backends)."""
    out: dict[str, dict[str, Any]] = {}
    for ingress in ingresses:
        a = _annotations(ingress)
        name, weight = a.get(CANARY_SERVICE), a.get(CANARY_WEIGHT, "0")
        if not name or not str(weight).isdigit() or int(weight) == 0:
            continue
        meta = ingress.get("metadata") or {}
        prefix = f"ing_{meta.get('namespace', '')}_{meta.get('name', '')}_"
        for route in ingress_paths(ingress):
            if route["backend"] in out:
                continue
            service = {"name": name, "port": route["service"].get("port") or {}}
            out[route["backend"]] = {"main": route["backend"], "backend": _backend_name(prefix, service),
                                     "service": service, "weight": int(weight), "type": "Canary"}
    return list(out.values())


def is_passthrough(ingress: Mapping[str, Any]) -> bool:
    """``haproxy-haptic.org/ssl-passthrough: "true"``; on a dialect's view (``with_dialect``) its own annotation."""
    settings = ingress.get("dialect")
    if settings is not None and _is_mapping(settings):
        return settings.get("ssl_passthrough") is True
    return _annotations(ingress).get(SSL_PASSTHROUGH) == "true"


def passthrough_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per exact host of the Ingresses ``is_passthrough`` (the first
    Ingress naming a host wins): ``host``, ``backend`` (``pt_<namespace>_<ingress>_<service>_<port>``: the
    Service of the host's first path), ``service`` and ``namespace``. Wildcard hosts and rules without host are
    left out: the TLS server name is matched exactly."""
    return same_call("passthrough_routes", ingresses, None, _passthrough_routes)


def _passthrough_routes(ingresses: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for ingress in ingresses:
        if not is_passthrough(ingress):
            continue
        meta = ingress.get("metadata") or {}
        prefix = f"pt_{meta.get('namespace', '')}_{meta.get('name', '')}_"
        for route in ingress_paths(ingress):
            host = route["host"]
            if host and not host.startswith("*") and host not in out:
                out[host] = {"host": host, "backend": _backend_name(prefix, route["service"]),
                             "service": route["service"], "namespace": meta.get("namespace", "")}
    return list(out.values())


def ingress_paths(ingress: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per service-backed path, plus one of type ``Default`` for ``spec.defaultBackend``.

    Each entry: ``host`` ("" for rules without host), ``path`` (default ``/``), ``type`` (pathType,
    default ``Prefix``; ``Default`` for the default backend), ``key`` (host + path), ``service`` (the
    backend's ``service`` object) and ``backend`` (``ing_<namespace>_<name>_<service>_<port>``).
    Resource backends are ignored. Call it on objects that passed ``reject_unsafe``.
    """
    meta = ingress.get("metadata") or {}
    spec = ingress.get("spec") or {}
    prefix = f"ing_{meta.get('namespace', '')}_{meta.get('name', '')}_"
    out: list[dict[str, Any]] = []
    default = spec.get("defaultBackend")
    default = default.get("service") if default else None
    if default is not None and _is_mapping(default):
        backend = _backend_name(prefix, default)
        out.append({"host": "", "path": "", "type": DEFAULT, "key": "", "service": default, "backend": backend})
    for rule in spec.get("rules") or ():
        host = rule.get("host") or ""
        http = rule.get("http")
        for path in (http.get("paths") if http else None) or ():
            backend = path.get("backend")
            service = backend.get("service") if backend else None
            if type(service) is not dict and not _is_mapping(service):
                continue
            value = path.get("path") or "/"
            out.append(
                {
                    "host": host,
                    "path": value,
                    "type": path.get("pathType") or "Prefix",
                    "key": host + value,
                    "service": service,
                    "backend": _backend_name(prefix, service),
                }
            )
    return out


def age_key(ingress: Mapping[str, Any]) -> tuple[bool, str, str, str]:
    """Oldest first (creationTimestamp), then namespace, then name: the tie-break of Ingress and Gateway API rules."""
    meta = ingress.get("metadata") or {}
    created = meta.get("creationTimestamp")
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    # RFC 3339 UTC timestamps ("2026-01-02T03:04:05Z") sort as strings; objects without one sort last.
    if type(created) is str:
        return (False, created, namespace if type(namespace) is str else str(namespace),
                name if type(name) is str else str(name))
    return (not isinstance(created, str), created if isinstance(created, str) else "", str(namespace), str(name))


def _hosts_of(ingress: Mapping[str, Any]) -> dict[str, int]:
    """host -> index of the first rule naming it, in rule order."""
    rules = (ingress.get("spec") or {}).get("rules") or []
    if len(rules) == 1:  # the common case: one rule
        rule = rules[0]
        host = rule.get("host") if _is_mapping(rule) else None
        return {host: 0} if type(host) is str and host else {}
    found: dict[str, int] = {}
    for i, rule in enumerate(rules):
        host = rule.get("host") if _is_mapping(rule) else None
        if type(host) is str and host and host not in found:
            found[host] = i
    return found


def _identity(ingress: Mapping[str, Any]) -> str:
    meta = ingress.get("metadata") or {}
    return f"{meta.get('namespace') or ''!s}/{meta.get('name', '')}"


def route_ownership(ingresses: Iterable[Any], shared_namespaces: Any = ()) -> dict[str, Any]:
    """Who owns each host, and which Ingresses lose a host to another namespace.

    The oldest Ingress (``creationTimestamp``, then namespace, then name) naming a host (a wildcard
    ``*.example.test`` is a host of its own) makes its namespace the host's owner. A later Ingress of
    another namespace naming that host is not routed at all. Namespaces listed in ``shared_namespaces``
    (``["*"]``: all) share hosts among themselves: one of them may add rules to a host another listed
    namespace owns.

    Returns ``ingresses`` (the routed ones, oldest first: on the same host and path the oldest wins),
    ``hosts`` (host -> owner namespace, sorted by host) and ``conflicts`` (one entry per Ingress left out:
    ``ingress``, ``host``, ``field``, ``owner`` ("namespace/name" of the owning Ingress) and ``message``).
    """
    shared = frozenset(str(n) for n in (shared_namespaces or ()) if isinstance(n, str))
    return same_call("route_ownership", ingresses, shared, lambda group: _route_ownership(group, shared))


def _route_ownership(ingresses: Sequence[Any], shared: frozenset[str]) -> dict[str, Any]:
    everyone = "*" in shared
    owners: dict[str, tuple[str, Any]] = {}  # host -> (namespace, the owning Ingress)
    routed: list[Any] = []
    conflicts: list[dict[str, Any]] = []
    for ingress in sorted(ingresses, key=age_key):
        meta = ingress.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        claims = _hosts_of(ingress)
        lost = None
        for host, index in claims.items():
            owner = owners.get(host)
            if owner is None or owner[0] == namespace:
                continue
            if everyone or (namespace in shared and owner[0] in shared):
                continue
            lost = (host, index, _identity(owner[1]))
            break
        if lost is not None:
            host, index, by = lost
            conflicts.append({
                "ingress": ingress, "host": host, "field": f"spec.rules[{index}].host", "owner": by,
                "message": f"host {host} is owned by namespace {by.split('/', 1)[0]} (Ingress {by}, the oldest "
                           f"naming it); this Ingress is not routed",
            })
            continue
        routed.append(ingress)
        if claims:
            owner_of = (namespace, ingress)
            for host in claims:
                owners.setdefault(host, owner_of)
    return {
        "ingresses": tuple(routed),  # a tuple: the fragment loop over it knows the same one again at once
        "hosts": {host: owners[host][0] for host in sorted(owners)},
        "conflicts": conflicts,
    }
