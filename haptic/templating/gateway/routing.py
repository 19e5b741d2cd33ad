"""HTTPRoute matching in HAProxy: one frontend per listener port, with the spec's precedence.

A request first picks its virtual host: the exact request host, else the longest wildcard suffix
(``*.example.com`` covers any name below example.com), else ``*`` (routes without hostname on
listeners without hostname); only that host's matches are considered (none matching: 404). Every
match of every rule attached there gets an id; lower ids win, in the spec's order:

1. ``Exact`` paths, then ``RegularExpression`` paths (longer patterns first; the spec leaves their
   place to implementations), then ``PathPrefix`` paths, longer first;
2. a match with a ``method`` before one without;
3. more header matches first, then more query parameter matches first;
4. the oldest route (creationTimestamp, then namespace/name), then rule order, then match order.

Path-only ``Exact``/``PathPrefix`` matches are looked up in map files (constant time for thousands
of routes); the others are ACL lines, evaluated in id order, each only while no better id matched.
The winning id maps to its rule, whose filters run as lines guarded by the rule id, and whose
backends are chosen by weight. ``PathPrefix`` honours path segments: ``/foo`` matches ``/foo`` and
``/foo/bar``, never ``/foobar``. ``RegularExpression`` must match the whole path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from haptic.templating.gateway.hostnames import specificity
from haptic.templating.gateway.routes import Attachment, Rule
from haptic.templating.gateway.safety import log_format, quoted

NO_MATCH = 1_000_000_000
ERROR_BACKEND = "gw_500"
NOT_FOUND_BACKEND = "haptic_default"
_PATH_RANK = {"Exact": 0, "RegularExpression": 1, "PathPrefix": 2}
_DURATION_PART = re.compile(r"([0-9]+)(h|ms|m|s)")
_UNIT_MS = {"h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}


class _Match(NamedTuple):
    """One match of a rule on one host (a named tuple: one per match and host, built at every model)."""

    host: str
    key: tuple[Any, ...]
    rule: Rule
    path_type: str
    path: str
    spec: Mapping[str, Any]

    @property
    def simple(self) -> bool:
        return self.path_type != "RegularExpression" and not (
            self.spec.get("method") or self.spec.get("headers") or self.spec.get("queryParams"))


@dataclass
class Frontend:
    """What the templates write for one listener port."""

    name: str
    port: int
    tls: bool
    lines: list[str] = field(default_factory=list)
    maps: dict[str, str] = field(default_factory=dict)
    #: (certificate file name, SNI filter) for the crt-list of a TLS frontend
    certificates: list[tuple[str, str]] = field(default_factory=list)


def duration_ms(value: Any) -> int | None:
    """A Gateway API duration (``1h2m3s4ms``) in milliseconds; None when absent or malformed."""
    if not isinstance(value, str) or not value:
        return None
    parts = _DURATION_PART.findall(value)
    if "".join(n + u for n, u in parts) != value:
        return None
    return sum(int(n) * _UNIT_MS[u] for n, u in parts)


def _precedence(host: str, rule: Rule, match_index: int, path_type: str, path: str,
                spec: Mapping[str, Any], age: tuple[Any, ...]) -> tuple[Any, ...]:
    return (specificity(host), host, _PATH_RANK.get(path_type, 3), -len(path) if path_type != "Exact" else 0,
            0 if spec.get("method") else 1, -len(spec.get("headers") or []), -len(spec.get("queryParams") or []),
            age, rule.index, match_index)


def _match_conditions(m: _Match) -> str:
    conds = [f"{{ var(txn.gw_vhost) -m str {quoted(m.host)} }}"]
    if m.path_type == "Exact":
        conds.append(f"{{ path -m str {quoted(m.path)} }}")
    elif m.path_type == "PathPrefix":
        prefix = m.path.rstrip("/")
        if prefix:
            conds.append(f"{{ path -m reg {quoted('^' + re.escape(prefix) + '(/|$)')} }}")
    else:
        conds.append(f"{{ path -m reg {quoted('^(?:' + m.path + ')$')} }}")
    if m.spec.get("method"):
        conds.append(f"{{ method {m.spec['method']} }}")
    for header in m.spec.get("headers") or []:
        how = "reg" if header.get("type") == "RegularExpression" else "str"
        conds.append(f"{{ req.fhdr({header['name']}) -m {how} {quoted(str(header['value']))} }}")
    for param in m.spec.get("queryParams") or []:
        how = "reg" if param.get("type") == "RegularExpression" else "str"
        conds.append(f"{{ urlp({param['name']}) -m {how} {quoted(str(param['value']))} }}")
    return " ".join(conds)


def _header_lines(verb: str, modifier: Mapping[str, Any], guard: str) -> list[str]:
    lines = [f"{verb} set-header {h['name']} {log_format(str(h['value']))} {guard}" for h in modifier.get("set") or []]
    lines += [f"{verb} add-header {h['name']} {log_format(str(h['value']))} {guard}" for h in modifier.get("add") or []]
    lines += [f"{verb} del-header {name} {guard}" for name in modifier.get("remove") or []]
    return lines


def _path_lines(path: Mapping[str, Any] | None, rule: Rule, guard: str) -> list[str]:
    if not path:
        return []
    if path.get("type") == "ReplaceFullPath":
        return [f"http-request set-path {log_format(str(path.get('replaceFullPath') or '/'))} {guard}"]
    matches = rule.spec.get("matches") or [{}]
    prefix = str(((matches[0].get("path") or {}).get("value")) or "/").rstrip("/")
    replacement = str(path.get("replacePrefixMatch") or "/").rstrip("/")
    if not replacement:
        return [f"http-request replace-path {quoted('^' + re.escape(prefix) + '/?(.*)$')} "
                f"{quoted('/' + chr(92) + '1')} {guard}"]
    return [f"http-request replace-path {quoted('^' + re.escape(prefix) + '(/.*)?$')} "
            f"{quoted(replacement + chr(92) + '1')} {guard}"]


def _redirect_lines(redirect: Mapping[str, Any], rule: Rule, port: int, tls: bool, guard: str) -> list[str]:
    scheme = redirect.get("scheme") or ("https" if tls else "http")
    target_port = redirect.get("port") or ({"http": 80, "https": 443}[scheme] if redirect.get("scheme") else port)
    default_port = {"http": 80, "https": 443}[scheme]
    host = redirect.get("hostname") or "%[var(txn.gw_host)]"
    where = f"{scheme}://{host}" + ("" if target_port == default_port else f":{target_port}")
    lines = _path_lines(redirect.get("path"), rule, guard)
    lines.append(f"http-request redirect prefix {quoted(where)} code {int(redirect.get('statusCode') or 302)} {guard}")
    return lines


def _rule_lines(rule: Rule, port: int, tls: bool) -> tuple[list[str], list[str], list[tuple[str, int]]]:
    """(request/response lines, weighted use_backend lines, [(backend, weight)]) of one rule."""
    guard = f"if {{ var(txn.gw_rule) -m str {rule.id} }}"
    lines: list[str] = []
    for flt in rule.spec.get("filters") or []:
        kind = flt.get("type")
        if kind == "RequestHeaderModifier":
            lines += _header_lines("http-request", flt.get("requestHeaderModifier") or {}, guard)
        elif kind == "ResponseHeaderModifier":
            lines += _header_lines("http-response", flt.get("responseHeaderModifier") or {}, guard)
        elif kind == "URLRewrite":
            rewrite = flt.get("urlRewrite") or {}
            if rewrite.get("hostname"):
                lines.append(f"http-request set-header host {quoted(rewrite['hostname'])} {guard}")
            lines += _path_lines(rewrite.get("path"), rule, guard)
    timeouts = rule.spec.get("timeouts") or {}
    limits = [v for v in (duration_ms(timeouts.get("request")), duration_ms(timeouts.get("backendRequest"))) if v]
    if limits:
        lines.append(f"http-request set-timeout server {min(limits)}ms {guard}")
    redirect = rule.redirect
    if redirect is not None:
        return lines + _redirect_lines(redirect, rule, port, tls, guard), [], []
    targets = [(ref.backend.name if ref.backend else ERROR_BACKEND, ref.weight) for ref in rule.refs if ref.weight > 0]
    if not targets:
        targets = [(ERROR_BACKEND, 1)]
    if len({name for name, _ in targets}) == 1:
        return lines, [], [(targets[0][0], 1)]
    total = sum(weight for _, weight in targets)
    pick = [f"http-request set-var(txn.gw_pick) rand({total}) {guard}"]
    chosen, upto = [], 0
    for name, weight in targets[:-1]:
        upto += weight
        chosen.append(f"use_backend {name} if {{ var(txn.gw_rule) -m str {rule.id} }} "
                      f"{{ var(txn.gw_pick) -m int lt {upto} }}")
    chosen.append(f"use_backend {targets[-1][0]} {guard}")
    return lines + pick, chosen, []


def build_frontends(attachments: list[Attachment], map_path: Any, age_of: Any) -> list[Frontend]:
    """One ``Frontend`` per listener port, ports ascending. ``map_path(filename)``: where a map file is."""
    by_port: dict[int, list[Attachment]] = {}
    for item in attachments:
        by_port.setdefault(item.listener.port, []).append(item)
    frontends = []
    for port in sorted(by_port):
        items = by_port[port]
        tls = items[0].listener.protocol == "HTTPS"
        frontends.append(_frontend(port, tls, items, map_path, age_of))
    return frontends


def _frontend(port: int, tls: bool, items: list[Attachment], map_path: Any, age_of: Any) -> Frontend:
    name = f"gw_{port}"
    fe = Frontend(name, port, tls)
    matches: dict[tuple[Any, ...], _Match] = {}
    for item in items:
        age = age_of(item.route)
        for rule in item.rules:
            for k, spec in enumerate(rule.spec.get("matches") or [{}]):
                path = spec.get("path") or {}
                path_type, value = str(path.get("type") or "PathPrefix"), str(path.get("value") or "/")
                for host in item.hostnames:
                    key = _precedence(host, rule, k, path_type, value, spec, age)
                    matches.setdefault(key, _Match(host, key, rule, path_type, value, spec))
    ordered = [matches[k] for k in sorted(matches)]
    files = {kind: f"{name}-{kind}.map" for kind in ("hosts", "wildcards", "exact", "prefix-exact", "prefix", "rules",
                                                     "backends")}
    paths = {kind: map_path(filename) for kind, filename in files.items()}
    hosts = sorted({m.host for m in ordered}, key=specificity)
    exact_hosts = [h for h in hosts if not h.startswith("*")]
    wildcards = sorted((h for h in hosts if h.startswith("*.")), key=lambda h: (-len(h), h))
    exact: dict[str, int] = {}
    prefix_exact: dict[str, int] = {}
    prefix: dict[str, int] = {}
    complex_lines: list[str] = []
    rule_of: dict[int, int] = {}
    rules: dict[int, Rule] = {}
    for number, m in enumerate(ordered, 1):
        rule_of[number] = m.rule.id
        rules.setdefault(m.rule.id, m.rule)
        if not m.simple:
            complex_lines.append(f"http-request set-var(txn.gw_match) int({number}) if "
                                 f"{{ var(txn.gw_match) -m int gt {number} }} {_match_conditions(m)}")
        elif m.path_type == "Exact":
            exact.setdefault(m.host + m.path, number)
        else:
            trimmed = m.path.rstrip("/")
            prefix_exact.setdefault(m.host + (trimmed or "/"), number)
            prefix.setdefault(m.host + trimmed + "/", number)
    fe.maps[files["hosts"]] = "".join(f"{h} {h}\n" for h in exact_hosts)
    fe.maps[files["wildcards"]] = "".join(f"{h[1:]} {h}\n" for h in wildcards)
    fe.maps[files["exact"]] = "".join(f"{k} {v}\n" for k, v in exact.items())
    fe.maps[files["prefix-exact"]] = "".join(f"{k} {v}\n" for k, v in prefix_exact.items())
    fe.maps[files["prefix"]] = "".join(f"{k} {v}\n" for k, v in sorted(prefix.items(), key=lambda kv: -len(kv[0])))
    fe.maps[files["rules"]] = "".join(f"{n} {r}\n" for n, r in rule_of.items())
    lines = fe.lines
    lines.append("http-request set-var(txn.gw_host) req.hdr(host),field(1,:),lower")
    lines.append("http-request set-var(txn.gw_path) path")
    lines.append(f"http-request set-var(txn.gw_vhost) var(txn.gw_host),map({paths['hosts']})")
    if wildcards:
        lines.append(f"http-request set-var(txn.gw_vhost) var(txn.gw_host),map_end({paths['wildcards']}) "
                     "if !{ var(txn.gw_vhost) -m found }")
    if "*" in hosts:
        lines.append("http-request set-var(txn.gw_vhost) str(*) if !{ var(txn.gw_vhost) -m found }")
    lines.append("http-request set-var(txn.gw_key) var(txn.gw_vhost),concat(,txn.gw_path)")
    lines.append(f"http-request set-var(txn.gw_match) var(txn.gw_key),map_str_int({paths['exact']})")
    lines.append(f"http-request set-var(txn.gw_match) var(txn.gw_key),map_str_int({paths['prefix-exact']}) "
                 "if !{ var(txn.gw_match) -m found }")
    lines.append(f"http-request set-var(txn.gw_match) var(txn.gw_key),map_beg_int({paths['prefix']}) "
                 "if !{ var(txn.gw_match) -m found }")
    if complex_lines:
        lines.append(f"http-request set-var(txn.gw_match) int({NO_MATCH}) if !{{ var(txn.gw_match) -m found }}")
        lines.extend(complex_lines)
    lines.append(f"http-request set-var(txn.gw_rule) var(txn.gw_match),map_int({paths['rules']})")
    single: dict[int, str] = {}
    chosen: list[str] = []
    for rule_id in sorted(rules):
        rule_lines, weighted, target = _rule_lines(rules[rule_id], port, tls)
        lines.extend(rule_lines)
        chosen.extend(weighted)
        if target:
            single[rule_id] = target[0][0]
    fe.maps[files["backends"]] = "".join(f"{r} {b}\n" for r, b in single.items())
    lines.extend(chosen)
    lines.append(f"use_backend %[var(txn.gw_rule),map({paths['backends']})] "
                 f"if {{ var(txn.gw_rule),map({paths['backends']}) -m found }}")
    lines.append(f"default_backend {NOT_FOUND_BACKEND}")
    return fe
