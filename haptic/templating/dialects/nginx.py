"""ingress-nginx's ``nginx.ingress.kubernetes.io/*`` annotations: the table of the ``nginx`` library.

Semantics follow ingress-nginx's annotation documentation: ``ssl-redirect`` defaults to true for an Ingress with
TLS and answers 308, ``permanent-redirect`` 301, ``temporal-redirect`` 302 (and wins over the permanent one),
``app-root`` 302, whitelists 403, ``proxy-body-size`` 413, basic auth 401 with the realm, rate limits 503;
``rewrite-target`` implies regex paths, matched case-insensitively, and may use their capture groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haptic.templating.dialects import Annotation, Dialect
from haptic.templating.dialects import values as v

PREFIX = "nginx.ingress.kubernetes.io/"

_SNIPPET = "an injection path, as in ingress-nginx's CVE-2021-25742"

CORS_METHODS = "GET, PUT, POST, DELETE, PATCH, OPTIONS"
CORS_HEADERS = ("DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, "
                "Range, Authorization")
PROTOCOL_OPTIONS = {"HTTP": "", "AUTO_HTTP": "", "HTTPS": " ssl verify none", "GRPC": " proto h2",
                    "H2C": " proto h2", "GRPCS": " ssl verify none alpn h2"}


def _snippet(name: str) -> Annotation:
    return Annotation(name, "HAProxy has no nginx configuration to inject into", "nothing", "refused", _SNIPPET,
                      routing=True, multiline=True)


ANNOTATIONS: tuple[Annotation, ...] = (
    Annotation("rewrite-target", "a path; `$1`..`$9` insert capture groups of the (regex) path",
               "`http-request replace-path '(?i)^(?:<path>)' '<target>'` in the backend, per path",
               parse=v.rewrite_target, routing=True,
               differences="implies `use-regex` for the Ingress's own paths only (ingress-nginx: every path of "
               "the host)"),
    Annotation("use-regex", "`true`/`false`", "non-Exact paths become case-insensitive `map_reg` entries "
               "`(?i)^<host>(?:<path>)`, tried after Exact and before Prefix paths, longest first", "differences",
               "applies to the Ingress's own paths only (ingress-nginx: every path of the host, across Ingresses)",
               v.boolean, routing=True, routing_difference=True),
    Annotation("ssl-redirect", "`true` (default when the Ingress has TLS)/`false`",
               "`http-request redirect scheme https code 308 unless { ssl_fc }`", parse=v.boolean),
    Annotation("force-ssl-redirect", "`true`/`false`", "the same redirect, also without TLS on the Ingress",
               parse=v.boolean),
    Annotation("permanent-redirect", "an absolute URL", "`http-request redirect location <url> code 301`",
               parse=v.url, key="permanent", routing=True),
    Annotation("permanent-redirect-code", "301, 302, 303, 307, 308", "the code of that redirect",
               parse=v.status_code(301, 302, 303, 307, 308), key="permanent_code"),
    Annotation("temporal-redirect", "an absolute URL", "`http-request redirect location <url> code 302` "
               "(wins over `permanent-redirect`)", parse=v.url, key="temporal", routing=True),
    Annotation("temporal-redirect-code", "301, 302, 303, 307, 308", "the code of that redirect",
               parse=v.status_code(301, 302, 303, 307, 308), key="temporal_code"),
    Annotation("app-root", "a path", "`http-request redirect code 302 location <scheme>://<host><app-root> if "
               "{ path / }`", parse=v.url_path, routing=True),
    Annotation("backend-protocol", "HTTP, HTTPS, GRPC, GRPCS, H2C, AUTO_HTTP", "server options: HTTPS `ssl verify "
               "none`, GRPC/H2C `proto h2`, GRPCS `ssl verify none alpn h2`", "differences",
               "the upstream certificate is not verified (as ingress-nginx's default); AUTO_HTTP is HTTP; FCGI is "
               "refused", v.one_of(*PROTOCOL_OPTIONS, lower=False), key="protocol", routing=True),
    Annotation("whitelist-source-range", "comma-separated CIDRs",
               "`http-request deny deny_status 403 unless { src <cidrs> }`", parse=v.cidrs, key="allow",
               routing=True),
    Annotation("allowlist-source-range", "comma-separated CIDRs", "as `whitelist-source-range`", parse=v.cidrs,
               key="allow", routing=True),
    Annotation("denylist-source-range", "comma-separated CIDRs", "`http-request deny deny_status 403 if "
               "{ src <cidrs> }`", parse=v.cidrs, key="deny", routing=True),
    Annotation("enable-cors", "`true`/`false`", "preflight `OPTIONS` answered 204 with the `Access-Control-*` "
               "headers (`http-request return`); other answers get them by `http-response set-header`",
               parse=v.boolean, key="cors_enabled"),
    Annotation("cors-allow-origin", "`*` (default) or a list of origins", "`Access-Control-Allow-Origin`: `*`, or "
               "the request's `Origin` when it is in the list", "differences", "wildcard origins (`https://*.x`) "
               "are refused", v.origins, key="cors.origins"),
    Annotation("cors-allow-methods", f"methods (default `{CORS_METHODS}`)", "`Access-Control-Allow-Methods`",
               parse=v.token_list, key="cors.methods"),
    Annotation("cors-allow-headers", "header names (default the ingress-nginx list)",
               "`Access-Control-Allow-Headers`", parse=v.token_list, key="cors.headers"),
    Annotation("cors-expose-headers", "header names", "`Access-Control-Expose-Headers`", parse=v.token_list,
               key="cors.expose"),
    Annotation("cors-allow-credentials", "`true` (default)/`false`", "`Access-Control-Allow-Credentials: true`",
               parse=v.boolean, key="cors.credentials"),
    Annotation("cors-max-age", "seconds (default 1728000)", "`Access-Control-Max-Age` on preflight answers",
               parse=v.integer(0, 999999999), key="cors.max_age"),
    Annotation("proxy-body-size", "a size (`8m`, `512k`, `0`: unlimited; default 1m as ingress-nginx, "
               "`extraContext.defaultProxyBodySize` in bytes)",
               "`http-request deny deny_status 413 if { req.hdr_val(content-length) gt <bytes> }`", "differences",
               "checks Content-Length (chunked bodies without it are not counted)", v.size, key="body_limit",
               routing=True),
    Annotation("proxy-connect-timeout", "seconds", "`timeout connect <n>s`", parse=v.seconds,
               key="timeout_connect"),
    Annotation("proxy-read-timeout", "seconds", "`timeout server <n>s` (the larger of read and send)",
               "differences", "HAProxy has one server inactivity timeout for both directions", v.seconds,
               key="read_timeout"),
    Annotation("proxy-send-timeout", "seconds", "`timeout server <n>s` (the larger of read and send)",
               "differences", "HAProxy has one server inactivity timeout for both directions", v.seconds,
               key="send_timeout"),
    Annotation("upstream-vhost", "host[:port]", "`http-request set-header Host <value>`", parse=v.host_port),
    Annotation("x-forwarded-prefix", "a path", "`http-request set-header X-Forwarded-Prefix <value>`",
               parse=v.url_path, key="forwarded_prefix"),
    Annotation("server-alias", "comma-separated host names", "the Ingress's rules repeated for each alias host "
               "(with the same host ownership rules)", parse=v.hosts, key="aliases", routing=True),
    Annotation("affinity", "`cookie`", "`cookie <name> insert indirect nocache` and `cookie SRV_n` on each server",
               parse=v.one_of("cookie"), key="affinity.type", routing=True),
    Annotation("affinity-mode", "`balanced`/`persistent`", "nothing: HAProxy's cookie is always persistent",
               "differences", "`balanced` does not rebalance sessions when servers are added",
               v.one_of("balanced", "persistent"), key="affinity.mode"),
    Annotation("session-cookie-name", "a cookie name (default `INGRESSCOOKIE`)", "the `cookie` name",
               parse=v.name, key="affinity.name"),
    Annotation("session-cookie-path", "a path", "`attr \"Path=<path>\"`", "differences",
               "HAProxy writes its own `path=/` first (`path=/; Path=/app`); browsers use the last "
               "Path attribute (RFC 6265)", v.url_path, key="affinity.path"),
    Annotation("session-cookie-max-age", "seconds", "`attr \"Max-Age=<n>\"`", parse=v.integer(1, 999999999),
               key="affinity.max_age"),
    Annotation("session-cookie-expires", "seconds", "`attr \"Max-Age=<n>\"` when no max-age is given",
               "differences", "written as Max-Age, not as an Expires date", v.integer(1, 999999999),
               key="affinity.expires"),
    Annotation("canary", "`true`/`false`", "the Ingress's paths do not route by themselves; the Ingress with the "
               "same host and path switches to the canary backend (`use_backend` after the map lookup)",
               parse=v.boolean, key="canary.enabled", routing=True),
    Annotation("canary-by-header", "a header name", "`always` → canary, `never` → main, else the next rule "
               "(precedence header > cookie > weight)", parse=v.header_name, key="canary.header", routing=True),
    Annotation("canary-by-header-value", "a value", "that value → canary, any other → the next rule",
               parse=v.name, key="canary.header_value", routing=True),
    Annotation("canary-by-cookie", "a cookie name", "`always` → canary, `never` → main, else the next rule",
               parse=v.name, key="canary.cookie", routing=True),
    Annotation("canary-weight", "0..total", "`rand(<total>) -m int lt <weight>` → canary", "differences",
               "the main backend is the one of the same Ingress service (all its paths follow the canary)",
               v.integer(0, 1000000), key="canary.weight", routing=True, routing_difference=True),
    Annotation("canary-weight-total", "an integer (default 100)", "the range of `rand`",
               parse=v.integer(1, 1000000), key="canary.total"),
    Annotation("canary-by-header-pattern", "a regex (RE2 syntax)", "`{ req.hdr(<header>) -m reg '<regex>' }` → "
               "canary, any other value → the next rule; ignored when canary-by-header-value is set",
               parse=v.regex, key="canary.header_pattern", routing=True),
    Annotation("auth-type", "`basic`", "`http-request auth realm \"<realm>\" unless { http_auth(<userlist>) }`",
               "differences", "digest is refused; passwords must be crypt(3) hashes haproxy can check (bcrypt, "
               "SHA-256/512-crypt, MD5-crypt; not htpasswd's apr1 or {SHA})", v.one_of("basic"), key="auth.type",
               routing=True),
    Annotation("auth-secret", "`name` or `namespace/name` of an Opaque Secret", "a `userlist` of its users",
               "differences", "the Secret must be in the Ingress's namespace (the namespace part must match)",
               v.secret_ref, key="auth.secret", routing=True),
    Annotation("auth-secret-type", "`auth-file` (key `auth`, htpasswd lines; default)/`auth-map` (user → hash)",
               "how the Secret is read", parse=v.one_of("auth-file", "auth-map"), key="auth.secret_type"),
    Annotation("auth-realm", "text", "the realm of `WWW-Authenticate: Basic realm=\"...\"`", parse=v.realm,
               key="auth.realm"),
    Annotation("limit-rps", "requests per second per client address",
               "a stick table `http_req_rate(1s)`; `deny deny_status 503` above rps * burst multiplier",
               "differences", "a sliding-window rate, not nginx's leaky bucket", v.integer(1, 1000000),
               key="rate.rps", routing=True),
    Annotation("limit-rpm", "requests per minute per client address", "as `limit-rps` with `http_req_rate(1m)`",
               "differences", "a sliding-window rate; with `limit-rps` too, only `limit-rps` applies",
               v.integer(1, 1000000), key="rate.rpm", routing=True),
    Annotation("limit-burst-multiplier", "an integer (default 5)", "the multiplier of the rate threshold",
               parse=v.integer(1, 1000), key="rate.burst"),
    Annotation("limit-connections", "concurrent connections per client address",
               "`conn_cur` in the stick table; `deny deny_status 503` above it", parse=v.integer(1, 1000000),
               key="conn_limit", routing=True),
    Annotation("limit-whitelist", "comma-separated CIDRs", "those sources are never rate limited",
               parse=v.cidrs, key="rate.exempt"),
    Annotation("load-balance", "`round_robin`/`ewma`", "`balance roundrobin` / `balance leastconn`", "differences",
               "ewma becomes leastconn", v.one_of("round_robin", "ewma"), key="load_balance"),
    Annotation("service-upstream", "`true`/`false`", "nothing: servers are the Service's endpoints either way",
               "differences", "HAProxy balances over the endpoints itself instead of through the ClusterIP",
               v.boolean),
    Annotation("custom-http-errors", "comma-separated statuses HAProxy has an error page for (400, 401, 403, 404, "
               "405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504)",
               "`http-response return status <code> default-errorfiles if { status <code> }` per status",
               "differences", "the upstream's answer with a listed status is replaced by HAProxy's own error "
               "page for that status (`extraContext.errorPages` when it has one, else HAProxy's built-in page), "
               "with the same status; the default backend (the `default-backend` annotation's or the global one) is "
               "not asked for the page, so no X-Code/X-Format/X-Original-URI request reaches it", v.error_status_list,
               key="error_statuses"),
    Annotation("default-backend", "a Service of the Ingress's namespace", "a backend of that Service (its first "
               "port); `use_backend` to it when `nbsrv()` of the Ingress's backend is 0", "differences",
               "not asked for custom-http-errors pages (see there)", v.name, routing=True),
    Annotation("ssl-passthrough", "`true`/`false`", "a `mode tcp` frontend on the https port: `use_backend` by "
               "`req_ssl_sni` to a `mode tcp` backend of the Service; other names go on to the terminating https "
               "frontend (PROXY v2 over an abstract socket)", "differences", "always available (ingress-nginx: "
               "only with --enable-ssl-passthrough); exact hosts only; every connection for a host goes to the "
               "Service of its first path; as in ingress-nginx, the Ingress's other annotations do not apply and it "
               "is not routed over plain HTTP", v.boolean, routing=True),
    Annotation("auth-url", "a URL", "`http-request deny deny_status 503`: fails closed", "differences",
               "external authentication is not supported: every request is denied instead of forwarded unchecked",
               v.url, key="deny_all", routing=True, routing_difference=True),
    Annotation("from-to-www-redirect", "`true`", "nothing", "ignored", "no www redirect", routing=True),
    _snippet("configuration-snippet"),
    _snippet("server-snippet"),
    _snippet("auth-snippet"),
    _snippet("stream-snippet"),
    _snippet("modsecurity-snippet"),
)


def _regex_paths(annotations: Mapping[str, str]) -> bool:
    return annotations.get(PREFIX + "use-regex") == "true" or bool(annotations.get(PREFIX + "rewrite-target"))


def _finish(s: dict[str, Any], raw: Mapping[str, str]) -> None:
    s["regex"] = bool(s.pop("use_regex", False)) or "rewrite_target" in s
    if "temporal" in s:
        s["redirect"] = {"location": s["temporal"], "code": s.get("temporal_code", 302)}
    elif "permanent" in s:
        s["redirect"] = {"location": s["permanent"], "code": s.get("permanent_code", 301)}
    if "protocol" in s:
        s["server_options"] = PROTOCOL_OPTIONS[s["protocol"]]
    timeouts = [int(s[k][:-1]) for k in ("read_timeout", "send_timeout") if k in s]
    if timeouts:
        s["timeout_server"] = f"{max(timeouts)}s"
    if s.get("load_balance"):
        s["balance"] = {"round_robin": "roundrobin", "ewma": "leastconn"}[s["load_balance"]]
    cors = s.pop("cors", {})
    if s.get("cors_enabled"):
        s["cors"] = {"origins": cors.get("origins", ["*"]), "methods": cors.get("methods", CORS_METHODS),
                     "headers": cors.get("headers", CORS_HEADERS), "credentials": cors.get("credentials", True),
                     "expose": cors.get("expose", ""), "max_age": cors.get("max_age", 1728000)}
    if s.get("body_limit") == 0:
        s["body_limit"] = None  # explicitly unlimited: no library default either
    affinity = s.pop("affinity", {})
    if affinity.get("type") == "cookie":
        s["affinity"] = {"name": affinity.get("name", "INGRESSCOOKIE"), "path": affinity.get("path"),
                         "max_age": affinity.get("max_age", affinity.get("expires"))}
    canary = s.pop("canary", {})
    if canary.get("enabled"):
        s["canary"] = {"header": canary.get("header"), "header_value": canary.get("header_value"),
                       "header_pattern": canary.get("header_pattern"),
                       "cookie": canary.get("cookie"), "weight": canary.get("weight", 0),
                       "total": canary.get("total", 100)}
    auth = s.pop("auth", {})
    if auth.get("type") == "basic" and auth.get("secret"):
        s["auth"] = {"secret": auth["secret"], "secret_type": auth.get("secret_type", "auth-file"),
                     "realm": auth.get("realm", "Authentication Required")}
    rate = s.pop("rate", {})
    if rate.get("rps") or rate.get("rpm"):
        period, limit = ("1s", rate["rps"]) if rate.get("rps") else ("1m", rate["rpm"])
        s["rate"] = {"limit": limit * rate.get("burst", 5), "period": period, "status": 503,
                     "expire": "60s" if period == "1s" else "2m",
                     "exempt": rate.get("exempt", [])}
    if s.get("conn_limit"):
        s["conn_limit"] = {"limit": s["conn_limit"], "status": 503}


NGINX = Dialect("nginx", PREFIX, "ingress-nginx", "nginx", ANNOTATIONS, _finish, _regex_paths)
