"""HAProxy Technologies kubernetes-ingress's ``haproxy.org/*`` annotations: the table of the ``haproxytech`` library.

Semantics follow that controller's annotation reference: ``ssl-redirect`` answers 302 by default, the source
lists deny with 403, ``rate-limit-requests`` counts over ``rate-limit-period`` (default 1s) and denies with
``rate-limit-status-code`` (default 403), header lists are one ``Name value`` per line, basic-auth Secrets map
user names to crypt(3) hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haptic.templating.dialects import Annotation, Dialect
from haptic.templating.dialects import values as v
from haptic.templating.safety import BALANCE_ALGORITHMS

PREFIX = "haproxy.org/"

_SNIPPET = "raw HAProxy lines from an Ingress are an injection path"


def _snippet(name: str) -> Annotation:
    return Annotation(name, "raw HAProxy lines", "nothing", "refused", _SNIPPET, routing=True, multiline=True)


def _balance(value: str) -> str:
    algorithm = value.split()[0] if value.split() else ""
    if algorithm not in BALANCE_ALGORITHMS or len(value.split()) > 1:
        raise ValueError(f"expected one of {', '.join(BALANCE_ALGORITHMS)} (without arguments)")
    return algorithm


ANNOTATIONS: tuple[Annotation, ...] = (
    Annotation("timeout-server", "a duration", "`timeout server <d>`", parse=v.duration),
    Annotation("timeout-connect", "a duration", "`timeout connect <d>`", parse=v.duration),
    Annotation("timeout-queue", "a duration", "`timeout queue <d>`", parse=v.duration),
    Annotation("timeout-tunnel", "a duration", "`timeout tunnel <d>`", parse=v.duration),
    Annotation("timeout-check", "a duration", "`timeout check <d>`", parse=v.duration),
    Annotation("load-balance", "roundrobin, static-rr, leastconn, first, source, random", "`balance <algorithm>`",
               "differences", "algorithms with arguments (`uri`, `hdr(...)`) are refused", _balance, key="balance"),
    Annotation("check", "`true`/`false`", "`check` on every server", "differences", "checks run on every "
               "server slot; disabled slots are not checked", v.boolean, key="check.enabled"),
    Annotation("check-http", "a path", "`option httpchk GET <path>`", parse=v.url_path, key="check.uri"),
    Annotation("check-interval", "a duration", "`inter <d>` on every server", parse=v.duration,
               key="check.interval"),
    Annotation("cookie-persistence", "a cookie name", "`cookie <name> insert indirect nocache` and `cookie SRV_n` "
               "on each server", parse=v.name, key="affinity.name", routing=True),
    Annotation("allow-list", "comma-separated CIDRs", "`http-request deny deny_status 403 unless { src <cidrs> }`",
               parse=v.cidrs, key="allow", routing=True),
    Annotation("whitelist", "comma-separated CIDRs", "as `allow-list` (its former name)", parse=v.cidrs,
               key="allow", routing=True),
    Annotation("deny-list", "comma-separated CIDRs", "`http-request deny deny_status 403 if { src <cidrs> }`",
               parse=v.cidrs, key="deny", routing=True),
    Annotation("blacklist", "comma-separated CIDRs", "as `deny-list` (its former name)", parse=v.cidrs,
               key="deny", routing=True),
    Annotation("rate-limit-requests", "requests per period per client address", "a stick table "
               "`http_req_rate(<period>)`; `deny deny_status <code>` above it", parse=v.integer(1, 100000000),
               key="rate.limit", routing=True),
    Annotation("rate-limit-period", "a duration (default 1s)", "the period of `http_req_rate`",
               parse=v.duration_seconds, key="rate.period"),
    Annotation("rate-limit-status-code", "an HTTP status (default 403)", "the `deny_status`",
               parse=v.http_status, key="rate.status"),
    Annotation("rate-limit-size", "a table size", "nothing: the table holds 100k entries", "differences",
               "fixed size", v.name, key="rate.size"),
    Annotation("ssl-redirect", "`true`/`false` (default: true when the Ingress has TLS)",
               "`http-request redirect scheme https code <code> unless { ssl_fc }` (`true`: also without TLS)",
               parse=v.boolean),
    Annotation("ssl-redirect-code", "301, 302 (default), 303, 307, 308", "the code of that redirect",
               parse=v.status_code(301, 302, 303, 307, 308)),
    Annotation("ssl-passthrough", "`true`/`false`", "a `mode tcp` frontend on the https port: `use_backend` by "
               "`req_ssl_sni` to a `mode tcp` backend of the Service; other names go on to the terminating https "
               "frontend (PROXY v2 over an abstract socket)", "differences", "exact hosts only (no wildcards); every "
               "connection for a host goes to the Service of its first path; the Ingress is not routed over plain "
               "HTTP and its other annotations do not apply", v.boolean, routing=True),
    Annotation("server-ssl", "`true`/`false`", "server option `ssl verify none`", "differences",
               "the server certificate is not verified", v.boolean),
    Annotation("server-proto", "`h2`", "server option `proto h2` (with `server-ssl`: `alpn h2`)",
               parse=v.one_of("h2")),
    Annotation("request-set-header", "one `Name value` per line", "`http-request set-header Name \"value\"`",
               parse=v.header_pairs, key="request_headers", multiline=True),
    Annotation("response-set-header", "one `Name value` per line", "`http-response set-header Name \"value\"`",
               parse=v.header_pairs, key="response_headers", multiline=True),
    Annotation("set-host", "host[:port]", "`http-request set-header Host <value>`", parse=v.host_port,
               key="upstream_vhost"),
    Annotation("path-rewrite", "`<regex> <replacement>` or a new path", "`http-request replace-path '<regex>' "
               "'<replacement>'` (a lone path replaces the whole path)", parse=v.path_rewrite, routing=True),
    Annotation("request-redirect", "host[:port]", "`http-request redirect prefix <scheme>://<host> code <code>`",
               parse=v.host_port, key="request_redirect", routing=True),
    Annotation("request-redirect-code", "301, 302 (default), 303, 307, 308", "the code of that redirect",
               parse=v.status_code(301, 302, 303, 307, 308)),
    Annotation("cors-enable", "`true`/`false`", "preflight `OPTIONS` answered 204 with the `Access-Control-*` "
               "headers; other answers get them by `http-response set-header`", "differences",
               "the preflight is always answered (kubernetes-ingress: only with cors-respond-to-options)",
               v.boolean, key="cors_enabled"),
    Annotation("cors-allow-origin", "`*` (default) or origins", "`Access-Control-Allow-Origin`", "differences",
               "regex origins are refused", v.origins, key="cors.origins"),
    Annotation("cors-allow-methods", "methods (default `*`)", "`Access-Control-Allow-Methods`",
               parse=v.token_list, key="cors.methods"),
    Annotation("cors-allow-headers", "header names (default `*`)", "`Access-Control-Allow-Headers`",
               parse=v.token_list, key="cors.headers"),
    Annotation("cors-allow-credentials", "`true`/`false` (default)", "`Access-Control-Allow-Credentials: true`",
               parse=v.boolean, key="cors.credentials"),
    Annotation("cors-max-age", "a duration (default 5s)", "`Access-Control-Max-Age` in seconds",
               parse=v.duration_seconds, key="cors.max_age"),
    Annotation("cors-respond-to-options", "`true`/`false`", "nothing: the preflight is always answered",
               "differences", "see cors-enable", v.boolean, key="cors.respond"),
    Annotation("auth-type", "`basic-auth`", "`http-request auth realm \"<realm>\" unless { http_auth(<userlist>) }`",
               "differences", "hashes must be crypt(3) hashes haproxy can check", v.one_of("basic-auth"),
               key="auth.type", routing=True),
    Annotation("auth-secret", "`name` or `namespace/name`: user names → crypt(3) hashes", "a `userlist`",
               "differences", "the Secret must be in the Ingress's namespace", v.secret_ref, key="auth.secret",
               routing=True),
    Annotation("auth-realm", "text (default `Protected-Content`)", "the realm", parse=v.realm, key="auth.realm"),
    Annotation("forwarded-for", "`true`/`false`", "nothing", "ignored", "X-Forwarded-For is not added"),
    Annotation("send-proxy-protocol", "proxy, proxy-v1, proxy-v2", "nothing", "ignored", "servers get no PROXY "
               "header", routing=True),
    Annotation("route-acl", "an ACL", "nothing", "ignored", "raw ACLs are not rendered", routing=True),
    Annotation("standalone-backend", "`true`", "nothing", "ignored", "backends are per Ingress already"),
    Annotation("scale-server-slots", "an integer", "nothing", "ignored", "server slots come from the config's "
               "serverSlots"),
    _snippet("backend-config-snippet"),
    _snippet("frontend-config-snippet"),
    _snippet("global-config-snippet"),
)


def _finish(s: dict[str, Any], raw: Mapping[str, str]) -> None:
    if s.get("ssl_redirect_code") is None:
        s["ssl_redirect_code"] = 302
    s["force_ssl_redirect"] = s.get("ssl_redirect") is True
    options = ""
    if s.pop("server_ssl", False):
        options = " ssl verify none" + (" alpn h2" if s.get("server_proto") else "")
    elif s.get("server_proto"):
        options = " proto h2"
    check = s.pop("check", {})
    if check.get("enabled") or check.get("uri"):
        options += " check" + (f" inter {check['interval']}" if check.get("interval") else "")
        s["check"] = {"uri": check.get("uri")}
    s["server_options"] = options
    if "request_redirect" in s:
        s["redirect_prefix"] = {"host": s.pop("request_redirect"), "code": s.get("request_redirect_code", 302)}
    cors = s.pop("cors", {})
    if s.get("cors_enabled"):
        s["cors"] = {"origins": cors.get("origins", ["*"]), "methods": cors.get("methods", "*"),
                     "headers": cors.get("headers", "*"), "credentials": cors.get("credentials", False),
                     "expose": "", "max_age": cors.get("max_age", 5)}
    affinity = s.pop("affinity", {})
    if affinity.get("name"):
        s["affinity"] = {"name": affinity["name"], "path": None, "max_age": None}
    auth = s.pop("auth", {})
    if auth.get("type") and auth.get("secret"):
        s["auth"] = {"secret": auth["secret"], "secret_type": "auth-map",
                     "realm": auth.get("realm", "Protected-Content")}
    rate = s.pop("rate", {})
    if rate.get("limit"):
        period = rate.get("period", 1)
        s["rate"] = {"limit": rate["limit"], "period": f"{period}s", "expire": f"{max(60, 2 * period)}s",
                     "status": rate.get("status", 403), "exempt": []}


HAPROXYTECH = Dialect("haproxytech", PREFIX, "HAProxy Technologies kubernetes-ingress", "haproxy", ANNOTATIONS,
                      _finish)
