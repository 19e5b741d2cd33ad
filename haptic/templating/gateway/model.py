"""``gateway_model``: everything the ``gateway`` template library writes, computed in one pass."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from haptic.templating.addresses import is_hostname
from haptic.templating.gateway.conditions import age_key, condition, generation_of
from haptic.templating.gateway.grpc import as_http_route, method_problems
from haptic.templating.gateway.listeners import Gateway, build_gateways, gateway_status
from haptic.templating.gateway.refs import Backend, Grants
from haptic.templating.gateway.routes import attach_routes
from haptic.templating.gateway.routing import ERROR_BACKEND, build_frontends
from haptic.templating.gateway.safety import route_problems
from haptic.templating.safety import unsafe_reasons
from haptic.templating.statuses import JsonPairs

#: The ``spec.controllerName`` of the GatewayClasses this controller serves (``extraContext.gatewayControllerName``).
CONTROLLER_NAME = "haproxy-haptic.org/gateway-controller"


# The problems of the routes of the last render, by identity: store objects are replaced, never mutated, so
# the same object has the same verdict (the entry holds it: its id cannot be reused), as in reject_unsafe.
_VERDICTS: dict[str, dict[int, tuple[Any, list[str]]]] = {}


def _list(resources: Mapping[str, Any], name: str) -> list[Any]:
    store = resources.get(name)
    return list(store.list()) if store is not None else []


class _ByName:
    """Objects by namespace and name, looked up as a store's ``get_single(namespace, name)``: one pass over the
    Services a model reads whole anyway (``_inputs``) instead of one store lookup per backendRef."""

    def __init__(self, objects: Iterable[Any]) -> None:
        self._objects: dict[tuple[str, str], Any] = {}
        for obj in objects:
            meta = obj.get("metadata") or {}
            self._objects[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = obj

    def get_single(self, namespace: str, name: str) -> Any:
        return self._objects.get((namespace, name))


def _secret_problem(secret: Any) -> str:
    if secret.get("type") not in (None, "kubernetes.io/tls"):
        return f"Secret type {secret.get('type')} is not kubernetes.io/tls"
    reasons = unsafe_reasons(secret, "secret")
    return "; ".join(reasons)


def _pem(secret: Mapping[str, Any]) -> str:
    data = secret.get("data") or {}
    try:
        crt = base64.b64decode(str(data.get("tls.crt", ""))).decode("ascii").strip()
        key = base64.b64decode(str(data.get("tls.key", ""))).decode("ascii").strip()
    except (binascii.Error, UnicodeDecodeError):
        return ""
    return f"{crt}\n{key}\n"


def _addresses(addresses: Iterable[Any]) -> list[dict[str, str]]:
    out = []
    for address in addresses:
        text = str(address)
        out.append({"type": "Hostname" if is_hostname(text) else "IPAddress", "value": text})
    return out


def _class_statuses(classes: list[Any]) -> tuple[set[str], list[tuple[Any, dict[str, Any]]]]:
    accepted: set[str] = set()
    statuses = []
    for gc in classes:
        gen = generation_of(gc)
        if (gc.get("spec") or {}).get("parametersRef"):
            cond = condition("Accepted", False, "InvalidParameters", "parametersRef is not supported", gen)
        else:
            accepted.add(str(gc["metadata"]["name"]))
            cond = condition("Accepted", True, "Accepted", "handled by this controller", gen)
        statuses.append((gc, {"conditions": [cond]}))
    return accepted, statuses


def _isolated_routes(isolated: Iterable[Any], served: Iterable[Any]) -> tuple[list[Any], dict[int, str]]:
    """The routes per-object isolation leaves out or holds back (current versions, oldest first) and why."""
    routes = sorted((as_http_route(o) if o.get("kind") == "GRPCRoute" else o for o in isolated
                     if isinstance(o, Mapping) and o.get("kind") in ("HTTPRoute", "GRPCRoute")), key=age_key)
    if not routes:
        return [], {}
    kept = {_route_key(r) for r in served}
    why = {}
    for route in routes:
        kept_back = "its last valid version stays deployed" if _route_key(route) in kept else "it is left out"
        why[id(route)] = ("haproxy -c rejected the configuration lines rendered from this route (the Warning "
                          f"Event RejectedByHAProxy names the field); {kept_back}")
    return routes, why


def _route_key(route: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = route.get("metadata") or {}
    return str(route.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or "")


# The backends' dicts of the last model by what each is made of (its Service object by identity: the dict holds
# it, so the id is not reused): a model computed again (a route changed) gives each unchanged backend the same
# dict, and the template's fragment of that backend, keyed by the dict, is reused.
_BACKENDS: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}


def _backend_dicts(backends: Iterable[Backend]) -> list[dict[str, Any]]:
    previous, kept = _BACKENDS.get("last", {}), {}
    out = []
    for b in backends:
        key = (b.name, b.namespace, b.service, b.port, b.h2c, id(b.service_object))
        found = previous.get(key)
        if found is None:
            found = {"name": b.name, "namespace": b.namespace, "service": b.service, "port": b.port, "h2c": b.h2c,
                     "serviceObject": b.service_object}
        kept[key] = found
        out.append(found)
    _BACKENDS["last"] = kept
    return out


#: the stores ``gateway_model`` reads (lists and lookups); not ``endpoints``: the backends' servers come later
_READS = ("gatewayclasses", "gateways", "httproutes", "grpcroutes", "referencegrants", "namespaces", "services",
          "secrets")
#: objects (compared by identity), values (compared by value): see ``_inputs``
Inputs = tuple[tuple[Any, ...], tuple[Any, ...]]
# The inputs of the last ``gateway_model`` call and its answer (see ``gateway_model``).
_LAST: dict[str, tuple[Any, dict[str, Any]]] = {}


def _inputs(resources: Mapping[str, Any], extra: Mapping[str, Any], path_resolver: Any,
            reserved_ports: Mapping[Any, Any] | None, addresses: Iterable[Any], isolated: Iterable[Any]
            ) -> Inputs:
    """What the model is a function of: objects compared by identity (those of the stores it reads, the isolated
    ones) and values compared by value (the setting it reads, where the pods keep files, the reserved ports, the
    published addresses)."""
    objects = (*(tuple(_list(resources, name)) for name in _READS), tuple(isolated))
    values = (str(extra.get("gatewayControllerName") or ""), path_resolver.get_path("f", "map"),
              path_resolver.get_path("f", "cert"), sorted((str(k), str(v)) for k, v in (reserved_ports or {}).items()),
              tuple(addresses))
    return objects, values


def _same_inputs(last: Inputs, now: Inputs) -> bool:
    return last[1] == now[1] and all(len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
                                     for a, b in zip(last[0], now[0], strict=True))


def gateway_model(resources: Mapping[str, Any], extra: Mapping[str, Any], path_resolver: Any,
                  reserved_ports: Mapping[Any, Any] | None = None, addresses: Iterable[Any] = (),
                  isolated: Iterable[Any] = ()) -> dict[str, Any]:
    """``model``, the same answer as the last call when what it reads is the same: store objects are replaced,
    never mutated, on change (the kept inputs hold them, so no identity is reused), and templates cannot change
    the answer (the sandbox is immutable). An EndpointSlice change, or a config change, recomputes nothing."""
    isolated = list(isolated)
    addresses = list(addresses)
    inputs = _inputs(resources, extra, path_resolver, reserved_ports, addresses, isolated)
    last = _LAST.get("model")
    if last is not None and _same_inputs(last[0], inputs):
        return last[1]
    answer = model(resources, extra, path_resolver, reserved_ports, addresses, isolated)
    _LAST["model"] = (inputs, answer)
    return answer


def model(resources: Mapping[str, Any], extra: Mapping[str, Any], path_resolver: Any,
          reserved_ports: Mapping[Any, Any] | None = None, addresses: Iterable[Any] = (),
          isolated: Iterable[Any] = ()) -> dict[str, Any]:
    """The Gateway API objects of the render's stores as frontends, backends, certificates and statuses.

    ``resources``: the render's stores (``gatewayclasses``, ``gateways``, ``httproutes``, ``referencegrants``,
    ``namespaces``, ``services``, ``secrets``); ``extra``: extraContext (``gatewayControllerName``);
    ``path_resolver``: the render's ``pathResolver``; ``reserved_ports``: port -> what else binds it;
    ``addresses``: what the Gateways' ``status.addresses`` publish (``published_addresses``: the publish
    address, or the running HAProxy pods' IPs); ``isolated``: the objects
    per-object isolation leaves out (``controller.isolated``): their routes get ``Accepted`` False.

    Returns ``frontends`` (``name``, ``port``, ``tls``, ``lines``, ``maps``, ``certificates``: [file, sni]),
    ``backends`` (``name``, ``namespace``, ``service``, ``port``, ``h2c``, ``serviceObject``: the Service),
    ``pems`` (certificate file -> PEM),
    ``statuses`` ([object, status]), ``excluded`` ([object, reason, message, field]: left out) and ``warnings``
    (the same shape: served, or refused by its status only, e.g. a rule dropped for RequestMirror).
    """
    controller = str(extra.get("gatewayControllerName") or CONTROLLER_NAME)
    reserved = {int(k): str(v) for k, v in (reserved_ports or {}).items()}
    classes = [gc for gc in _list(resources, "gatewayclasses")
               if (gc.get("spec") or {}).get("controllerName") == controller]
    class_names, statuses = _class_statuses(sorted(classes, key=age_key))
    grants = Grants(_list(resources, "referencegrants"))
    services, secrets = _ByName(_list(resources, "services")), resources.get("secrets")
    gateways, unsafe_gateways = build_gateways(_list(resources, "gateways"), class_names, grants, secrets,
                                               _secret_problem, reserved)
    excluded: list[list[Any]] = [[obj, "UnsafeInput", problems, problems.split(" ", 1)[0]]
                                 for obj, problems in unsafe_gateways]
    for obj, problems in unsafe_gateways:
        gen = generation_of(obj)
        statuses.append((obj, {"conditions": [condition("Accepted", False, "ListenersNotValid", problems, gen),
                                              condition("Programmed", False, "Invalid", problems, gen)]}))
    by_key: dict[tuple[str, str], Gateway] = {g.key: g for g in gateways if g.problem is None}
    labels = {str(ns["metadata"]["name"]): (ns["metadata"].get("labels") or {})
              for ns in _list(resources, "namespaces")}
    # Routes the controller isolates (their lines failed haproxy -c) are hidden by the engine's stores; their
    # statuses come from ``isolated``.
    grpc_problems: dict[int, list[str]] = {}
    grpc_routes = []
    for original in _list(resources, "grpcroutes"):
        converted = as_http_route(original)
        grpc_problems[id(converted)] = method_problems(original)
        grpc_routes.append(converted)
    # each route's age once: the order of the routes, then of their matches (``build_frontends``)
    routes = [*_list(resources, "httproutes"), *grpc_routes]
    ages = {id(r): age_key(r) for r in routes}
    routes.sort(key=lambda r: ages[id(r)])
    unsafe_routes: dict[int, str] = {}
    previous, verdicts = _VERDICTS.get("routes", {}), {}
    for route in routes:
        hit = previous.get(id(route))
        found = hit[1] if hit is not None and hit[0] is route else \
            grpc_problems.get(id(route), []) + route_problems(route)
        verdicts[id(route)] = (route, found)
        if found:
            unsafe_routes[id(route)] = "; ".join(found)
            excluded.append([route, "UnsafeInput", "; ".join(found), found[0].split(" ", 1)[0]])
    _VERDICTS["routes"] = verdicts
    attached = attach_routes(routes, by_key, labels, grants, services, controller, unsafe_routes)
    published = _addresses(addresses)
    statuses.extend((g.obj, gateway_status(g, published)) for g in gateways)
    statuses.extend(attached.statuses)
    left_out, why = _isolated_routes(isolated, routes)
    if left_out:
        # After the served routes: a held-back route's status describes its current, rejected version.
        statuses.extend(attach_routes(left_out, by_key, labels, grants, services, controller, why).statuses)
    frontends = build_frontends([a for a in attached.attachments if a.rules],
                                lambda name: path_resolver.get_path(name, "map"), lambda r: ages[id(r)])
    pems: dict[str, str] = {}
    listeners_by_port: dict[int, list[Any]] = {}
    for gateway in gateways:
        for listener in gateway.listeners:
            if listener.usable and gateway.problem is None:
                listeners_by_port.setdefault(listener.port, []).append(listener)
    out_frontends: list[dict[str, Any]] = []
    ports_done = {fe.port for fe in frontends}
    for fe in frontends:
        for listener in listeners_by_port.get(fe.port, []):
            for cert in listener.certificates:
                filename = f"gw_{cert.namespace}_{cert.name}.pem"
                pems.setdefault(filename, _pem(cert.secret))
                entry = (filename, listener.hostname or "")
                if entry not in fe.certificates:
                    fe.certificates.append(entry)
        out_frontends.append({"name": fe.name, "port": fe.port, "tls": fe.tls, "lines": fe.lines, "maps": fe.maps,
                              "certificates": [list(c) for c in fe.certificates]})
    # Listeners without routes still bind their port (the spec's 404 for unmatched requests).
    for port in sorted(set(listeners_by_port) - ports_done):
        first = listeners_by_port[port][0]
        certs = []
        for listener in listeners_by_port[port]:
            for cert in listener.certificates:
                filename = f"gw_{cert.namespace}_{cert.name}.pem"
                pems.setdefault(filename, _pem(cert.secret))
                certs.append([filename, listener.hostname or ""])
        out_frontends.append({"name": f"gw_{port}", "port": port, "tls": first.protocol == "HTTPS",
                              "lines": ["default_backend haptic_default"], "maps": {}, "certificates": certs})
    out_frontends.sort(key=lambda f: f["port"])
    for fe_dict in out_frontends:
        # crt-list lines name the certificates where the templates register them; the first is the default.
        fe_dict["crtList"] = "".join(
            path_resolver.get_path(file, "cert") + (f" {sni}" if sni else "") + "\n"
            for file, sni in fe_dict["certificates"]) if fe_dict["tls"] else ""
    backends: dict[str, Backend] = {}
    for rule in attached.rules:
        for ref in rule.refs:
            if ref.backend is not None:
                backends.setdefault(ref.backend.name, ref.backend)
    return {
        "controllerName": controller,
        "frontends": out_frontends,
        "backends": _backend_dicts(b for _, b in sorted(backends.items())),
        "errorBackend": ERROR_BACKEND,
        "pems": pems,
        "statuses": JsonPairs([obj, status] for obj, status in statuses),
        "excluded": excluded,
        "warnings": attached.warnings,
    }
