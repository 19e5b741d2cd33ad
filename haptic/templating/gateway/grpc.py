"""GRPCRoutes as the HTTP matches they are: a gRPC call is a POST to ``/<service>/<method>`` over HTTP/2.

``as_http_route`` rewrites a GRPCRoute's method matches into path matches (Exact service and method: an
Exact path; service only: the ``/<service>`` PathPrefix; method only, or RegularExpression: a regular
expression over the whole path), keeps header matches, filters and backendRefs, so that GRPCRoutes share
the HTTPRoute machinery (attachment, precedence, weights, statuses). Their backends speak h2c.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from haptic.templating.gateway.safety import regex_problem

_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*\Z")
_SERVICE = re.compile(r"^\.?[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*\Z")


def _path_match(method: Mapping[str, Any]) -> dict[str, Any]:
    service, name = method.get("service"), method.get("method")
    if method.get("type", "Exact") == "RegularExpression":
        return {"type": "RegularExpression", "value": f"/(?:{service or '[^/]+'})/(?:{name or '[^/]+'})"}
    if service and name:
        return {"type": "Exact", "value": f"/{service}/{name}"}
    if service:
        return {"type": "PathPrefix", "value": f"/{service}"}
    return {"type": "RegularExpression", "value": f"/[^/]+/{re.escape(str(name or ''))}"}


def method_problems(route: Mapping[str, Any]) -> list[str]:
    """Service and method names that are not gRPC names (Exact) or not safe regular expressions."""
    problems = []
    for i, rule in enumerate((route.get("spec") or {}).get("rules") or []):
        for j, match in enumerate((rule or {}).get("matches") or []):
            method = (match or {}).get("method") or {}
            for field, pattern in (("service", _SERVICE), ("method", _NAME)):
                value = method.get(field)
                if value is None:
                    continue
                at = f"spec.rules[{i}].matches[{j}].method.{field}"
                if method.get("type", "Exact") == "Exact":
                    if not (isinstance(value, str) and pattern.match(value)):
                        problems.append(f"{at} {value!r} is not a gRPC name")
                else:
                    problem = regex_problem(value, at, max_length=4096)
                    if problem:
                        problems.append(problem)
    return problems


def as_http_route(route: Mapping[str, Any]) -> dict[str, Any]:
    """The GRPCRoute with HTTPRoute-shaped rules (same apiVersion, kind, metadata and status)."""
    spec = route.get("spec") or {}
    rules = []
    for rule in spec.get("rules") or []:
        matches = []
        for match in (rule or {}).get("matches") or []:
            converted: dict[str, Any] = {"path": _path_match(match.get("method") or {})} \
                if match.get("method") else {}
            if match.get("headers"):
                converted["headers"] = match["headers"]
            matches.append(converted)
        rules.append({"matches": matches, "filters": rule.get("filters") or [],
                      "backendRefs": rule.get("backendRefs") or []})
    return {**route, "spec": {"parentRefs": spec.get("parentRefs") or [], "hostnames": spec.get("hostnames") or [],
                              "rules": rules}}
