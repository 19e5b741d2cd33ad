"""Values of Gateway API objects that would inject HAProxy directives, and how safe values are quoted.

The CRD schemas bound most fields, but header values, regular expressions and path replacements are
free strings, and the stores may hold what no API server checked (admission reviews, fixtures). The
library writes values in single quotes (HAProxy takes everything literally up to the next quote), so
a value must not hold a quote or a control character; values in log-format positions (header
values, redirect parts) additionally get ``%`` doubled. ``route_problems``/``gateway_problems`` list
what is wrong (field path first), like ``haptic.templating.safety.unsafe_reasons`` does for Ingresses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from haptic.core.control_characters import CONTROL_CHARACTERS
from haptic.templating.safety import is_hostname, is_ingress_path

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z")
# Header and query parameter names go unquoted into sample fetch arguments (``req.fhdr(name)``), where
# ``#`` starts a comment and ``$``/``%`` expand: of the spec's token characters, letters, digits and -_. only.
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-_.]{0,255}\Z")
_FREE_TEXT_FORBIDDEN = re.compile(f"['{CONTROL_CHARACTERS}]")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})


def quoted(value: str) -> str:
    """``value`` as one HAProxy word, taken literally (checked safe beforehand)."""
    return "'" + value + "'"


def log_format(value: str) -> str:
    """``value`` quoted for a log-format argument: ``%`` would start a sample expression."""
    return quoted(value.replace("%", "%%"))


def _free_text(value: Any, max_length: int = 4096) -> bool:
    return isinstance(value, str) and 0 < len(value) <= max_length and not _FREE_TEXT_FORBIDDEN.search(value)


def regex_problem(value: Any, where: str, max_length: int = 1024) -> str | None:
    """Why ``value`` cannot be a route's regular expression (``where`` names the field), or None."""
    if not _free_text(value, max_length):
        return f"{where} contains a quote or control characters"
    try:
        re.compile(value)
    except re.error as exc:
        return f"{where} is not a regular expression: {exc}"
    return None


def _dns(value: Any) -> bool:
    return isinstance(value, str) and bool(_DNS_SUBDOMAIN.match(value))


def _meta_problems(obj: Mapping[str, Any]) -> list[str]:
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace"), meta.get("name")
    if (namespace is None or _dns(namespace)) and (name is None or _dns(name)):
        return []  # the common case, without a pass per field (checked for every route of a startup)
    return [f"metadata.{field} {meta.get(field)!r} is not a DNS name"
            for field in ("namespace", "name") if meta.get(field) is not None and not _dns(meta.get(field))]


def _name_value(items: Any, where: str) -> list[str]:
    problems = []
    for i, item in enumerate(items or []):
        if not isinstance(item, Mapping):
            problems.append(f"{where}[{i}] is not an object")
            continue
        name = item.get("name")
        if not (isinstance(name, str) and _HEADER_NAME.match(name)):
            problems.append(f"{where}[{i}].name {name!r} is not a header name")
        if not _free_text(item.get("value")):
            problems.append(f"{where}[{i}].value contains a quote or control characters")
    return problems


def _path_modifier(path: Any, where: str) -> list[str]:
    if not isinstance(path, Mapping):
        return []
    for field in ("replaceFullPath", "replacePrefixMatch"):
        value = path.get(field)
        if value is not None and not is_ingress_path(value):
            return [f"{where}.{field} {value!r} contains unsafe characters"]
    return []


def _filter_problems(filters: Any, where: str) -> list[str]:
    problems: list[str] = []
    for i, flt in enumerate(filters or []):
        at = f"{where}[{i}]"
        if not isinstance(flt, Mapping):
            problems.append(f"{at} is not an object")
            continue
        for field in ("requestHeaderModifier", "responseHeaderModifier"):
            modifier = flt.get(field)
            if isinstance(modifier, Mapping):
                problems += _name_value(modifier.get("set"), f"{at}.{field}.set")
                problems += _name_value(modifier.get("add"), f"{at}.{field}.add")
                for j, name in enumerate(modifier.get("remove") or []):
                    if not (isinstance(name, str) and _HEADER_NAME.match(name)):
                        problems.append(f"{at}.{field}.remove[{j}] {name!r} is not a header name")
        for field in ("requestRedirect", "urlRewrite"):
            action = flt.get(field)
            if not isinstance(action, Mapping):
                continue
            host = action.get("hostname")
            if host is not None and not (is_hostname(host) and not host.startswith("*")):
                problems.append(f"{at}.{field}.hostname {host!r} is not a DNS name")
            problems += _path_modifier(action.get("path"), f"{at}.{field}.path")
    return problems


def _match_problems(match: Any, where: str) -> list[str]:
    if not isinstance(match, Mapping):
        return [f"{where} is not an object"]
    problems = []
    path = match.get("path") or {}
    kind, value = path.get("type", "PathPrefix"), path.get("value", "/")
    if kind in ("Exact", "PathPrefix"):
        if not is_ingress_path(value):
            problems.append(f"{where}.path.value {value!r} contains unsafe characters")
    elif kind == "RegularExpression":
        problem = regex_problem(value, f"{where}.path.value")
        if problem:
            problems.append(problem)
    else:
        problems.append(f"{where}.path.type {kind!r} is unknown")
    for field in ("headers", "queryParams"):
        if match.get(field):
            problems += _name_value(match[field], f"{where}.{field}")
    method = match.get("method")
    if method is not None and method not in _METHODS:
        problems.append(f"{where}.method {method!r} is not an HTTP method")
    return problems


def route_problems(route: Mapping[str, Any]) -> list[str]:
    """Everything that makes an HTTPRoute unsafe to render (empty: safe)."""
    problems = _meta_problems(route)
    spec = route.get("spec") or {}
    for i, host in enumerate(spec.get("hostnames") or []):
        if not is_hostname(host):
            problems.append(f"spec.hostnames[{i}] {host!r} is not a DNS name")
    for i, rule in enumerate(spec.get("rules") or []):
        at = f"spec.rules[{i}]"
        if not isinstance(rule, Mapping):
            problems.append(f"{at} is not an object")
            continue
        for j, match in enumerate(rule.get("matches") or []):
            problems += _match_problems(match, f"{at}.matches[{j}]")
        if rule.get("filters"):
            problems += _filter_problems(rule["filters"], f"{at}.filters")
        for j, ref in enumerate(rule.get("backendRefs") or []):
            if not isinstance(ref, Mapping):
                problems.append(f"{at}.backendRefs[{j}] is not an object")
                continue
            for field in ("name", "namespace"):
                if ref.get(field) is not None and not _dns(ref.get(field)):
                    problems.append(f"{at}.backendRefs[{j}].{field} {ref.get(field)!r} is not a DNS name")
            weight = ref.get("weight", 1)
            if not (isinstance(weight, int) and 0 <= weight <= 1_000_000):
                problems.append(f"{at}.backendRefs[{j}].weight {weight!r} is not 0..1000000")
            port = ref.get("port")
            if port is not None and not (isinstance(port, int) and 0 < port < 65536):
                problems.append(f"{at}.backendRefs[{j}].port {port!r} is not a port")
    return problems


def gateway_problems(gateway: Mapping[str, Any]) -> list[str]:
    """Everything that makes a Gateway unsafe to render (empty: safe)."""
    problems = _meta_problems(gateway)
    for i, listener in enumerate((gateway.get("spec") or {}).get("listeners") or []):
        at = f"spec.listeners[{i}]"
        if not isinstance(listener, Mapping):
            problems.append(f"{at} is not an object")
            continue
        if not _dns(listener.get("name")):
            problems.append(f"{at}.name {listener.get('name')!r} is not a DNS name")
        host = listener.get("hostname")
        if host is not None and not is_hostname(host):
            problems.append(f"{at}.hostname {host!r} is not a DNS name")
        port = listener.get("port")
        if not (isinstance(port, int) and 0 < port < 65536):
            problems.append(f"{at}.port {port!r} is not a port")
        for j, ref in enumerate(((listener.get("tls") or {}).get("certificateRefs")) or []):
            for field in ("name", "namespace"):
                if isinstance(ref, Mapping) and ref.get(field) is not None and not _dns(ref.get(field)):
                    problems.append(f"{at}.tls.certificateRefs[{j}].{field} {ref.get(field)!r} is not a DNS name")
    return problems
