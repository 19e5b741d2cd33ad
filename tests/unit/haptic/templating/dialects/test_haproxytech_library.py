"""The haproxytech library rendered end to end (ResourceStores, the real ``haproxy -c``)."""

from __future__ import annotations

import pytest

from haptic.templating.engine import TemplateEngine
from tests.unit.haptic.templating.dialects.library_render import (
    HASH,
    engine_for,
    haproxy_check,
    ingress,
    library_spec,
    opaque_secret,
    render,
    service,
)

H = "haproxy.org/"
SPEC = library_spec("haproxytech")


@pytest.fixture(scope="module")
def engine() -> TemplateEngine:
    return engine_for(SPEC)


def test_the_haproxy_org_annotations_become_the_directives_they_name(engine: TemplateEngine) -> None:
    web = ingress("web", {
        H + "timeout-server": "30s", H + "timeout-connect": "2s", H + "load-balance": "leastconn",
        H + "check": "true", H + "check-http": "/healthz", H + "check-interval": "5s",
        H + "cookie-persistence": "srv", H + "allow-list": "10.0.0.0/8", H + "deny-list": "10.9.0.0/16",
        H + "rate-limit-requests": "100", H + "rate-limit-period": "10s", H + "rate-limit-status-code": "429",
        H + "ssl-redirect": "true", H + "server-ssl": "true", H + "server-proto": "h2",
        H + "request-set-header": "X-Env prod\nX-Team web", H + "response-set-header": "X-Served-By haptic",
        H + "set-host": "internal.example", H + "path-rewrite": "^/api/(.*) /\\1",
        H + "cors-enable": "true", H + "cors-allow-origin": "https://a.example",
        H + "auth-type": "basic-auth", H + "auth-secret": "users",
    }, cls="haproxy")
    moved = ingress("moved", {H + "request-redirect": "new.example:8443", H + "request-redirect-code": "301"},
                    host="moved.example.test", cls="haproxy")
    result = render(SPEC, engine, web, moved, *service("web"), opaque_secret("users", {"admin": HASH}))
    valid, output = haproxy_check(result)
    assert valid, output
    config = result.config
    for line in (
        "    balance leastconn\n", "    timeout server 30s\n", "    timeout connect 2s\n",
        "    option httpchk GET /healthz\n", "    cookie srv insert indirect nocache\n",
        "    http-request deny deny_status 403 unless { src 10.0.0.0/8 }\n",
        "    http-request deny deny_status 403 if { src 10.9.0.0/16 }\n",
        "    stick-table type ipv6 size 100k expire 60s store http_req_rate(10s)\n",
        "    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100 }\n",
        "    http-request redirect scheme https code 302 unless { ssl_fc }\n",
        '    http-request set-header X-Env "prod"\n', '    http-response set-header X-Served-By "haptic"\n',
        "    http-request set-header Host internal.example\n", "    http-request replace-path '^/api/(.*)' '/\\1'\n",
        f"    user admin password {HASH}\n",
        '    http-request auth realm "Protected-Content" unless { http_auth(auth_ns_web) }\n',
        "    server SRV_1 10.1.0.1:8080 ssl verify none alpn h2 check inter 5s cookie SRV_1\n",
        "    http-request redirect prefix %[ssl_fc,iif(https,http)]://new.example:8443 code 301\n",
    ):
        assert line in config, line
    assert result.notices == ()


def test_config_snippets_are_refused_and_the_ingress_still_routes(engine: TemplateEngine) -> None:
    web = ingress("web", {H + "backend-config-snippet": "http-request set-header X-Hack yes\n",
                          H + "load-balance": "uri whole"}, cls="haproxy")
    result = render(SPEC, engine, web, *service("web"))
    assert "X-Hack" not in result.config and "uri whole" not in result.config
    assert sorted(n.reason for n in result.notices) == ["AnnotationInvalid", "AnnotationRefused"]
    assert "app.example.test/ ing_ns_web_web_80" in result.aux.maps["path-prefix.map"]


def test_a_header_list_with_a_hostile_line_is_refused_not_rendered(engine: TemplateEngine) -> None:
    web = ingress("web", {H + "request-set-header": "X-A ok\nX-B %[src]"}, cls="haproxy")
    result = render(SPEC, engine, web, *service("web"))
    assert "%[src]" not in result.config and 'X-A "ok"' not in result.config
    assert [n.reason for n in result.notices] == ["AnnotationInvalid"]


def test_control_characters_in_one_line_annotations_exclude_the_ingress(engine: TemplateEngine) -> None:
    web = ingress("web", {H + "timeout-server": "1s\n    server evil 6.6.6.6:1"}, cls="haproxy")
    result = render(SPEC, engine, web, *service("web"))
    assert "6.6.6.6" not in result.config
    assert [(n.reason, n.excluded) for n in result.notices] == [("UnsafeInput", True)]


def test_ssl_passthrough_routes_by_server_name_and_an_invalid_value_is_refused(engine: TemplateEngine) -> None:
    result = render(SPEC, engine,
                    ingress("vault", {H + "ssl-passthrough": "true"}, host="vault.example.test", cls="haproxy"),
                    ingress("odd", {H + "ssl-passthrough": "yes"}, host="odd.example.test", cls="haproxy"),
                    *service("web"))
    valid, output = haproxy_check(result)
    assert valid and "Warnings were found" not in output, output
    config = result.config
    assert "use_backend pt_ns_vault_web_80 if { req_ssl_sni -i vault.example.test }" in config
    assert "odd.example.test }" not in config and "odd.example.test/ ing_ns_odd_web_80" in result.aux.maps[
        "path-prefix.map"]
    assert "vault.example.test" not in result.aux.maps["path-prefix.map"]
    assert [(n.reason, n.field) for n in result.notices] == [
        ("AnnotationInvalid", f"metadata.annotations[{H}ssl-passthrough]")]
