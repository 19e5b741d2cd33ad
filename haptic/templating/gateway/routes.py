"""HTTPRoutes: which listeners each one attaches to (``parentRefs``), its rules' backends, and its status.

A parentRef names a Gateway of this controller, optionally one listener (``sectionName``) or port.
The route attaches to every usable listener the ref selects that allows its namespace and kind and
whose hostname intersects the route's hostnames. Its status gets one ``parents[]`` entry per such
parentRef (entries of other controllers are kept): ``Accepted`` (``NoMatchingParent``,
``NotAllowedByListeners``, ``NoMatchingListenerHostname``, ``UnsupportedValue``, ``IncompatibleFilters``),
``ResolvedRefs`` (``InvalidKind``, ``RefNotPermitted``, ``BackendNotFound``) and ``PartiallyInvalid`` while
some rules are dropped (a ``RequestMirror`` filter or backendRef filters: HAProxy cannot implement them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haptic.templating.gateway.conditions import condition, generation_of
from haptic.templating.gateway.listeners import Gateway, Listener, route_hostnames
from haptic.templating.gateway.refs import GATEWAY_GROUP, Grants, ResolvedRef, resolve_backend_ref

SUPPORTED_FILTERS = ("RequestHeaderModifier", "ResponseHeaderModifier", "RequestRedirect", "URLRewrite")
#: Extended filters HAProxy cannot implement (it has no request mirroring): a rule using one is invalid and
#: dropped, as the spec's HTTPRouteRule.filters asks (PartiallyInvalid, or the route not Accepted when no
#: rule is left).
DROPPED_FILTERS = ("RequestMirror",)


@dataclass
class Rule:
    """One rule of a route: its id (unique in the render), spec and resolved backends."""

    id: int
    route: Any
    index: int
    spec: Mapping[str, Any]
    refs: list[ResolvedRef]

    @property
    def redirect(self) -> Mapping[str, Any] | None:
        for flt in self.spec.get("filters") or []:
            if flt.get("type") == "RequestRedirect":
                return flt.get("requestRedirect") or {}
        return None


@dataclass
class Attachment:
    """A route attached to one listener, with the hostnames it serves there."""

    route: Any
    listener: Listener
    hostnames: list[str]
    rules: list[Rule] = field(default_factory=list)


@dataclass
class RouteResult:
    attachments: list[Attachment] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    statuses: list[tuple[Any, dict[str, Any]]] = field(default_factory=list)
    #: [route, reason, message, field]: what the route's author should hear (a Warning Event, an admission warning)
    warnings: list[list[Any]] = field(default_factory=list)


def _ref_key(ref: Mapping[str, Any], route_namespace: str) -> tuple[str, str, str, str, str, Any]:
    return (str(ref.get("group", GATEWAY_GROUP)), str(ref.get("kind", "Gateway")),
            str(ref.get("namespace") or route_namespace), str(ref.get("name") or ""),
            str(ref.get("sectionName") or ""), ref.get("port"))


def _unsupported_filter(rules: list[Any]) -> str | None:
    """Why the whole route is refused: a filter type this library does not know (``ExtensionRef`` included:
    no custom filter resolves, and its requests must not be served as if it were absent)."""
    for i, rule in enumerate(rules):
        for j, flt in enumerate(rule.get("filters") or []):
            if flt.get("type") not in SUPPORTED_FILTERS + DROPPED_FILTERS:
                return f"spec.rules[{i}].filters[{j}]: filter {flt.get('type')} is not supported"
    return None


def _rule_problem(index: int, rule: Mapping[str, Any]) -> str | None:
    """Why one rule is invalid and dropped (an extended filter HAProxy cannot implement), or None."""
    for j, flt in enumerate(rule.get("filters") or []):
        if flt.get("type") in DROPPED_FILTERS:
            return (f"spec.rules[{index}].filters[{j}]: {flt.get('type')} is not supported "
                    "(HAProxy cannot mirror requests)")
    for j, ref in enumerate(rule.get("backendRefs") or []):
        if ref.get("filters"):
            return f"spec.rules[{index}].backendRefs[{j}].filters: backendRef filters are not supported"
    return None


#: the listeners of a Gateway a parentRef attaches routes of one namespace and kind to, or why it attaches none
Selection = tuple[list[Listener], tuple[bool, str, str] | None]


def _select(ref: Mapping[str, Any], gateway: Gateway, namespace: str,
            namespace_labels: Mapping[str, Mapping[str, str]], kind: str) -> Selection:
    section, port = ref.get("sectionName"), ref.get("port")
    candidates = [item for item in gateway.listeners
                  if (not section or item.name == section) and (port is None or item.port == port)]
    if not candidates:
        return [], (False, "NoMatchingParent", "no listener matches the parentRef's sectionName/port")
    usable = [item for item in candidates if item.usable]
    if not usable:
        return [], (False, "NoMatchingParent", "the listeners the parentRef selects are not programmed")
    allowed = [item for item in usable
               if item.allows_kind(kind) and item.allows_namespace(namespace, namespace_labels.get(namespace))]
    if not allowed:
        return [], (False, "NotAllowedByListeners", f"no listener allows {kind}s of namespace {namespace}")
    return allowed, None


def _attach_one(route: Any, ref: Mapping[str, Any], gateway: Gateway, namespace: str,
                namespace_labels: Mapping[str, Mapping[str, str]], kind: str,
                out: RouteResult, selections: dict[tuple[Any, ...], Selection]) -> tuple[bool, str, str]:
    # the listeners do not change while routes attach (only whom they count as attached): one selection per
    # Gateway, section, port, namespace and kind serves every route that asks the same
    key = (id(gateway), ref.get("sectionName"), ref.get("port"), namespace, kind)
    try:
        selection = selections.get(key)
        hashable = True
    except TypeError:  # an unhashable sectionName or port (a store may hold what no API server checked)
        selection, hashable = None, False
    if selection is None:
        selection = _select(ref, gateway, namespace, namespace_labels, kind)
        if hashable:
            selections[key] = selection
    allowed, refused = selection
    if refused is not None:
        return refused
    hostnames = list((route.get("spec") or {}).get("hostnames") or [])
    attached = False
    for item in allowed:
        served = route_hostnames(item, hostnames)
        if served:
            out.attachments.append(Attachment(route, item, served))
            meta = route["metadata"]
            item.attached[(str(meta.get("namespace")), str(meta.get("name")))] = None
            attached = True
    if not attached:
        return False, "NoMatchingListenerHostname", "no listener hostname intersects the route's hostnames"
    return True, "Accepted", "accepted"


def attach_routes(routes: list[Any], gateways: Mapping[tuple[str, str], Gateway],
                  namespace_labels: Mapping[str, Mapping[str, str]], grants: Grants, services: Any,
                  controller_name: str, unsafe: Mapping[int, str], first_rule: int = 1) -> RouteResult:
    """Attachments, rules and statuses of ``routes`` (oldest first); ``unsafe``: ``id(route)`` -> problems
    of routes left out (they get ``Accepted: False``, ``UnsupportedValue``)."""
    out = RouteResult()
    next_rule = first_rule
    selections: dict[tuple[Any, ...], Selection] = {}
    for route in routes:
        kind = str(route.get("kind") or "HTTPRoute")
        meta = route.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        spec = route.get("spec") or {}
        gen = generation_of(route)
        rules_spec = list(spec.get("rules") or [])
        refused = unsafe.get(id(route)) or _unsupported_filter(rules_spec)
        problems = {i: p for i, rule in enumerate(rules_spec) if (p := _rule_problem(i, rule)) is not None}
        dropped = ("Dropped Rule(s) " + ", ".join(str(i) for i in problems) + ": " + "; ".join(problems.values())
                   if problems else "")
        if not refused and problems and len(problems) == len(rules_spec):
            refused = dropped
        parents: list[dict[str, Any]] = []
        first_attachment = len(out.attachments)
        seen: set[tuple[Any, ...]] = set()
        any_attached = False
        for ref in spec.get("parentRefs") or []:
            key = _ref_key(ref, namespace)
            if key[0] != GATEWAY_GROUP or key[1] != "Gateway" or key in seen:
                continue
            gateway = gateways.get((key[2], key[3]))
            if gateway is None:
                continue  # not a Gateway of this controller: another controller reports on it
            seen.add(key)
            if refused:
                reason = "IncompatibleFilters" if refused == dropped else "UnsupportedValue"
                ok, message = False, refused
            else:
                ok, reason, message = _attach_one(route, ref, gateway, namespace, namespace_labels, kind, out,
                                                  selections)
            any_attached = any_attached or ok
            parents.append({"parentRef": dict(ref), "controllerName": controller_name,
                            "conditions": [condition("Accepted", ok, reason, message, gen)]})
        if not parents:
            continue
        if dropped and (not refused or refused == dropped):
            out.warnings.append([route, "UnsupportedValue", dropped, next(iter(problems.values())).split(":", 1)[0]])
        rules = []
        if any_attached:
            for index, rule in enumerate(rules_spec):
                if index in problems:
                    continue
                refs = [resolve_backend_ref(r, namespace, kind, grants, services)
                        for r in rule.get("backendRefs") or []]
                rules.append(Rule(next_rule, route, index, rule, refs))
                next_rule += 1
            out.rules.extend(rules)
            for attachment in out.attachments[first_attachment:]:
                attachment.rules = rules
        broken = next((r for rule in rules for r in rule.refs if r.backend is None), None)
        resolved = condition("ResolvedRefs", broken is None, broken.reason if broken else "ResolvedRefs",
                             broken.message if broken else "all references resolved", gen)
        for parent in parents:
            parent["conditions"].append(dict(resolved))
            if dropped and parent["conditions"][0]["status"] == "True":
                # Only set while some rules are valid: the spec's "Drop Rule(s)" approach.
                parent["conditions"].append(condition("PartiallyInvalid", True, "UnsupportedValue", dropped, gen))
        others = [p for p in (route.get("status") or {}).get("parents") or []
                  if isinstance(p, Mapping) and p.get("controllerName") != controller_name]
        out.statuses.append((route, {"parents": parents + [dict(p) for p in others]}))
    return out
