"""The per-object lines of the Ingress and Gateway libraries, computed in Python: each backend's directives and
server lines, and the entries of the Ingress library's path maps.

A full render of the library (a config change, startup) walks every Ingress: the same work as Jinja
statements costs several sandboxed lookups, tests and filter calls each, ~100 us per Ingress. The template
keeps the shape of ``haproxy.cfg`` (``backend``, ``mode http``, the directives, the ``server`` lines) and
prints what these helpers return.

Render state is reached only through the render context's own objects (``shared``, the store views,
``server_slots``, ``first_seen``, ``warn``): their calls are journalled as the template's would be, so a
fragment around a helper call is reused exactly when the template's own statements would be (see
``haptic.templating.fragments``). Imports only the templating helpers it builds on; never the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any

from haptic.names import ANNOTATION_PREFIX
from haptic.templating.context import IdentityMemo, current_render
from haptic.templating.filters import warn
from haptic.templating.ingress_helpers import canary_routes, ingress_routes, is_passthrough
from haptic.templating.list_memo import same_call
from haptic.templating.safety import BACKEND_PROTOCOLS, parse_cidrs, parse_request_headers

PREFIX = ANNOTATION_PREFIX
#: ``haproxy-haptic.org/backend-protocol`` -> what each server line adds
PROTOCOL_OPTIONS = dict(zip(BACKEND_PROTOCOLS, ("", " proto h2", " ssl verify none", " ssl verify none alpn h2"),
                            strict=True))
_TIMEOUTS = ("server", "connect", "queue", "tunnel")
REDIRECT = "http-request redirect scheme https code 308 unless { ssl_fc }"
_SSL_REDIRECT, _SERVER_SLOTS = PREFIX + "ssl-redirect", PREFIX + "server-slots"
_CANARY_SERVICE = PREFIX + "canary-service"
_NO_ANNOTATIONS: Mapping[str, Any] = {}
_SPEC = attrgetter("spec")

#: service, service port reference, EndpointSlices -> ready endpoints (the engine's ``service_endpoints``)
EndpointsOf = Callable[[Any, Any, Sequence[Any]], Sequence[Any]]


def _get(value: Any, key: str) -> Any:
    # the exact type first: store objects are dicts, and the ABC check costs more than the lookup
    return value.get(key) if type(value) is dict or isinstance(value, Mapping) else None


def backend_directives(a: Mapping[str, Any], redirect: bool) -> list[str]:
    """The directives of an Ingress backend from the documented ``haproxy-haptic.org/*`` annotations ``a``
    (validated by ``reject_unsafe``): balance, timeouts, ``option httpchk``, the allow-list deny, set-header
    rules; then the redirect to https when ``redirect``."""
    if not a:
        lines = ["balance roundrobin"]
    else:
        lines = [f"balance {a.get(PREFIX + 'balance', 'roundrobin')}"]
        for kind in _TIMEOUTS:
            value = a.get(f"{PREFIX}timeout-{kind}")
            if value:
                lines.append(f"timeout {kind} {value}")
        if a.get(PREFIX + "health-check-path"):
            lines.append(f"option httpchk GET {a[PREFIX + 'health-check-path']}")
        if a.get(PREFIX + "allow-list"):
            sources = " ".join(parse_cidrs(a[PREFIX + "allow-list"]))
            lines.append(f"http-request deny deny_status 403 unless {{ src {sources} }}")
        if a.get(PREFIX + "request-set-header"):
            for name, value in parse_request_headers(a[PREFIX + "request-set-header"]):
                lines.append(f'http-request set-header {name} "{value}"')
    if redirect:
        lines.append(REDIRECT)
    return lines


def server_options(a: Mapping[str, Any]) -> str:
    """What each server line of an Ingress backend adds: the backend protocol's options, then ``check`` (and
    its ``inter``) when a health check is asked for."""
    if not a:
        return ""
    try:
        opts = PROTOCOL_OPTIONS.get(a.get(PREFIX + "backend-protocol", "http"), "")
    except TypeError:  # an unhashable value: no such protocol
        opts = ""
    interval = a.get(PREFIX + "health-check-interval")
    if a.get(PREFIX + "health-check-path") or interval:
        opts += " check" + (f" inter {interval}" if interval else "")
    return opts


Plan = tuple[Sequence[dict[str, Any]], str, list[str]]


#: what a plain Ingress's backends are made of apart from render state: its routes (with the canary twins), the
#: server options and the directives before the redirect. Module-level, as ``with_dialect``'s views: a config
#: change builds a new engine over the same objects.
_PLANS: IdentityMemo[Plan] = IdentityMemo()


def _plan(render: Any, ing: Mapping[str, Any], a: Mapping[str, Any]) -> Plan:
    hit = _PLANS.get_one(render, ing)
    if hit is not None:
        return hit
    if is_passthrough(ing):  # no HTTP routes
        routes: list[dict[str, Any]] = []
    else:
        routes = ingress_routes(ing) + (canary_routes([ing]) if a and a.get(_CANARY_SERVICE) else [])
    return _PLANS.put_one(ing, (tuple(routes), server_options(a), backend_directives(a, redirect=False)))


def ingress_backends(ing: Mapping[str, Any], default_backend: Any, resources: Mapping[str, Any], shared: Any,
                     slots: Any, settings: Mapping[str, Any], endpoints_of: EndpointsOf) -> Iterable[dict[str, Any]]:
    """The backends one Ingress (or its dialect view, ``ing.dialect``) adds, each once per render.

    Walks the Ingress's routes (the dialect's ``routes``; none for ssl-passthrough; with the canary twins of
    ``canary-service``, which are backends, never routes): appends every route to ``shared`` ``routes`` (a
    dialect canary's excepted), warns about a ``defaultBackend`` that an older Ingress's overrides, and yields
    each backend the render has not seen yet (``first_seen("backend", name)``): ``name``, ``route`` (its first
    route), ``redirect`` (to https), ``dialect`` (whether ``ing`` is a dialect view), ``directives``
    (``backend_directives``; empty for a dialect view, whose ``dialect-backend`` snippet renders them),
    ``servers`` (``service_servers``: the ``server`` lines after the keyword), and both joined as the template
    writes them after its first indentation (``directive_lines``) and its first ``server`` keyword
    (``server_lines``): one output each instead of a Jinja loop per line, ~10 % of a full render at 10,000.

    For a dialect view a generator: its calls on render state interleave with the template's own
    (``dialect-userlist``) as they would in a Jinja loop. A plain Ingress's loop body makes no call on render state:
    its backends come at once, as a tuple (the sandbox's loop guard lets a short one through as it is: no generator
    and no guarding generator per Ingress)."""
    found = _backends(ing, default_backend, resources, shared, slots, settings, endpoints_of)
    return found if ing.get("dialect") else tuple(found)


def _backends(ing: Mapping[str, Any], default_backend: Any, resources: Mapping[str, Any], shared: Any,
              slots: Any, settings: Mapping[str, Any], endpoints_of: EndpointsOf) -> Iterator[dict[str, Any]]:
    meta = _get(ing, "metadata") or {}
    ns = meta.get("namespace")
    a = meta.get("annotations") or _NO_ANNOTATIONS
    d = ing.get("dialect")
    state = current_render()
    if d:
        member = f"{ns}/{meta.get('name')}"
        opts = d.get("server_options") or ""
        # Jinja's ``d.ssl_redirect is not sameas false``: an absent setting is not False
        redirect = bool(d.get("force_ssl_redirect") or (d.get("ssl_redirect") is not False
                                                         and shared.marked("tls_ingresses", member)))
        cookie = bool(d.get("affinity"))
        routes = d.get("routes") or []
        canary = bool(d.get("canary"))
    else:
        routes, opts, directives = _plan(state, ing, a)
        flag = a.get(_SSL_REDIRECT) if a else None
        redirect = flag == "true" or (flag != "false" and shared.marked("tls_ingresses", f"{ns}/{meta.get('name')}"))
        if redirect:
            directives = [*directives, REDIRECT]
        cookie = False
        canary = False
    step = (a.get(_SERVER_SLOTS) if a else None) or settings.get("serverSlots") or 10
    shrink_after = settings.get("slotShrinkAfter")
    for route in routes:
        kind = route["type"]
        if kind not in ("Default", "Canary"):
            if not canary:
                shared.append("routes", route)
        elif kind == "Default" and route["backend"] != default_backend:
            warn(f"defaultBackend ignored: {default_backend} (of an older Ingress) is the default backend", ing,
                 "DefaultBackendIgnored", "spec.defaultBackend")
        name = route["backend"]
        if not state.first_seen(("backend", name)):  # ``first_seen("backend", name)``
            continue
        svc = route["service"]
        servers = service_servers(resources, slots, name, ns, svc.get("name"), svc.get("port"), step, shrink_after,
                                  opts, endpoints_of, cookie)
        yield {"name": name, "route": route, "redirect": redirect, "dialect": bool(d),
               "directives": [] if d else directives, "servers": servers, "server_lines": SERVER_LINES.join(servers),
               "directive_lines": "" if d else DIRECTIVE_LINES.join(directives)}


def service_servers(resources: Mapping[str, Any], slots: Any, backend: str, namespace: Any, service: Any,
                    port: Any, step: Any, shrink_after: Any, options: str, endpoints_of: EndpointsOf,
                    cookie: bool = False) -> list[str]:
    """The ``server`` lines (after the keyword) of ``backend``: the ready endpoints of the Service port (the
    stores ``services`` and ``endpoints`` of ``resources``) in ``server_slots`` (``step`` slots at a time), each
    line followed by ``options`` (and ``cookie SRV_n`` with ``cookie``)."""
    assigned = _slots(resources["services"].get_single(namespace, service), resources, slots, backend, namespace,
                      service, port, step, shrink_after, endpoints_of)
    if cookie:
        return [f"{s.spec}{options} cookie {s.name}" for s in assigned]
    return [s.spec + options for s in assigned] if options else list(map(_SPEC, assigned))


def _slots(service_object: Any, resources: Mapping[str, Any], slots: Any, backend: str, namespace: Any,
           service: Any, port: Any, step: Any, shrink_after: Any, endpoints_of: EndpointsOf) -> list[Any]:
    """The server slots of ``backend``: the ready endpoints of the Service ``service_object`` (already looked up)."""
    found = endpoints_of(service_object, port, resources["endpoints"].lookup(namespace, service))
    assigned: list[Any] = slots.assign(backend, found, step, shrink_after)
    return assigned


#: what joins a backend's server lines: the template writes the first ``server`` keyword
SERVER_LINES = "\n    server "
#: what joins a backend's directives: the template writes the first one's indentation
DIRECTIVE_LINES = "\n    "


def gateway_servers(backend: Mapping[str, Any], resources: Mapping[str, Any], slots: Any,
                    settings: Mapping[str, Any], endpoints_of: EndpointsOf) -> str:
    """The ``server`` lines of one of the Gateway library's backends (``gateway_model``'s ``backends``: ``name``,
    ``namespace``, ``service``, ``port``, ``h2c``, ``serviceObject``), joined by ``SERVER_LINES`` (one Jinja
    output instead of a loop over ten lines): ``service_servers`` of its Service object, ``proto h2`` for h2c,
    ``serverSlots`` slots at a time (never none). One backend per call: the template renders each in a
    fragment, which the model's dict of the backend keys (a changed Service object gives a new dict), so the
    Service is not looked up again."""
    # the port as a reference mapping: ``service_endpoints`` reads it as it reads the number, and its memo keys a
    # plain mapping without an ABC check and a ``repr``
    assigned = _slots(backend["serviceObject"], resources, slots, backend["name"], backend["namespace"],
                      backend["service"], {"number": backend["port"]}, settings.get("serverSlots") or 10, None,
                      endpoints_of)
    if backend.get("h2c"):
        return SERVER_LINES.join(s.spec + " proto h2" for s in assigned)
    return SERVER_LINES.join(map(_SPEC, assigned))


def _longest_key_first(routes: Iterable[Any]) -> list[Any]:
    # ``sort_by(["$.key | length:desc"])``: stable, routes without a key last
    present = [r for r in routes if r.get("key") is not None]
    present.sort(key=lambda r: len(r["key"]), reverse=True)
    return present + [r for r in routes if r.get("key") is None]


def exact_map_entries(routes: Iterable[Any]) -> list[tuple[str, str]]:
    """(key, backend) of every ``Exact`` route, each key once (the first route naming it wins)."""
    return same_call("exact_map_entries", routes, None, _exact_map_entries)


def _exact_map_entries(routes: Iterable[Any]) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for r in routes:
        if r["type"] == "Exact" and r["key"] not in out:
            out[r["key"]] = r["backend"]
    return list(out.items())


def prefix_map_entries(routes: Iterable[Any]) -> list[tuple[str, str]]:
    """(key, backend) of every prefix-matched route (not ``Exact``, not ``Regex``): the key is host + path
    without trailing slashes + ``/`` (matched against the request's host + path + ``/``, so a path matches
    itself and what lies below it, element-wise), longest first (``map_beg`` takes the first match), each
    key once."""
    return same_call("prefix_map_entries", routes, None, _prefix_map_entries)


def _prefix_map_entries(routes: Iterable[Any]) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for r in _longest_key_first(list(routes)):
        if r["type"] not in ("Exact", "Regex"):
            key = f"{r['host']}{r['path'].rstrip('/')}/"
            if key not in out:
                out[key] = r["backend"]
    return list(out.items())
