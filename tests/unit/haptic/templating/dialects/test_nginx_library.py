"""The nginx library rendered end to end (ResourceStores, the real ``haproxy -c``), with hostile and invalid values."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.templating.engine import TemplateEngine
from haptic.templating.libraries import LibraryError, available_libraries, with_bases
from tests.unit.haptic.templating.dialects.library_render import (
    HASH,
    engine_for,
    haproxy_check,
    ingress,
    library_spec,
    opaque_secret,
    render,
    render_stores,
    service,
    stores_of,
)

P = "nginx.ingress.kubernetes.io/"
SPEC = library_spec("nginx")


@pytest.fixture(scope="module")
def engine() -> TemplateEngine:
    return engine_for(SPEC)


def everything() -> list[dict[str, Any]]:
    """One Ingress per group of annotations, as real-world manifests combine them."""
    return [
        ingress("rw", {P + "rewrite-target": "/$2", P + "use-regex": "true"}, path="/api(/|$)(.*)",
                path_type="ImplementationSpecific", host="rw.example.test"),
        ingress("main", {P + "enable-cors": "true", P + "cors-allow-origin": "https://a.example", P + "proxy-body-size":
                         "1k", P + "whitelist-source-range": "127.0.0.1/32", P + "upstream-vhost": "internal.example",
                         P + "x-forwarded-prefix": "/p", P + "affinity": "cookie", P + "session-cookie-max-age": "60",
                         P + "limit-rps": "2", P + "limit-connections": "3", P + "proxy-read-timeout": "30",
                         P + "proxy-send-timeout": "90", P + "custom-http-errors": "404, 503"},
                host="main.example.test"),
        ingress("canary", {P + "canary": "true", P + "canary-by-header": "X-Canary", P + "canary-by-cookie": "beta",
                           P + "canary-weight": "20"}, host="main.example.test", service="web2",
                created="2026-02-01T00:00:00Z"),
        ingress("auth", {P + "auth-type": "basic", P + "auth-secret": "ns/basic", P + "auth-realm": "Need login",
                         P + "app-root": "/app"}, host="auth.example.test"),
        ingress("redir", {P + "permanent-redirect": "https://new.example.test/x", P + "permanent-redirect-code": "308",
                          P + "backend-protocol": "GRPCS", P + "server-alias": "alias.example.test"},
                host="redir.example.test"),
        *service("web"), *service("web2"),
        opaque_secret("basic", {"auth": f"user:{HASH}\nold:$apr1$abc$def\n"}),
    ]


def test_every_annotation_group_renders_a_config_haproxy_accepts(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, *everything())
    valid, output = haproxy_check(result)
    assert valid, output
    assert "Warnings were found" not in output, output
    config = result.config
    assert "http-request replace-path '(?i)^(?:/api(/|$)(.*)).*' '/\\2' if { var(txn.rewrite) -m int 1 }" in config
    assert result.aux.maps["path-regex.map"] == "(?i)^rw[.]example[.]test(?:/api(/|$)(.*)) ing_ns_rw_web_80\n"
    assert "rw.example.test" not in result.aux.maps["path-prefix.map"]
    assert "http-request deny deny_status 413 if { req.hdr_val(content-length) gt 1024 }" in config
    assert "timeout server 90s" in config
    assert "http-response return status 404 default-errorfiles if { status 404 }" in config
    assert "http-response return status 503 default-errorfiles if { status 503 }" in config
    assert "http_req_rate(1s),conn_cur" in config and "sc_http_req_rate(0) gt 10 }" in config
    assert "server SRV_1 10.1.0.1:8080 cookie SRV_1" in config
    assert "http-request redirect location https://new.example.test/x code 308" in config
    assert "server SRV_1 10.1.0.1:8080 ssl verify none alpn h2" in config
    assert "alias.example.test/ ing_ns_redir_web_80" in result.aux.maps["path-prefix.map"]
    assert f"    user user password {HASH}\n" in config and "$apr1$" not in config
    assert 'http-request auth realm "Need login" unless { http_auth(auth_ns_auth) }' in config


def test_canary_paths_never_route_by_themselves_and_switch_in_precedence_order(engine: TemplateEngine) -> None:
    config = render(SPEC, engine, *everything()).config
    on = "if { var(txn.backend) -m str ing_ns_main_web_80 }"
    to_canary = f"str(ing_ns_canary_web2_80) {on}"
    header = config.index(f"{to_canary} {{ req.hdr(X-Canary) -m str always }}")
    cookie = config.index(f"{to_canary} !{{ var(txn.canary) -m found }} {{ req.cook(beta) -m str")
    weight = config.index(f"{to_canary} !{{ var(txn.canary) -m found }} {{ rand(100) -m int lt 20 }}")
    assert header < cookie < weight < config.index("use_backend %[var(txn.canary)]")
    assert "ing_ns_canary_web2_80" not in render(SPEC, engine, *everything()).aux.maps["path-prefix.map"]


def test_refused_invalid_and_unknown_annotations_are_warnings_naming_the_ingress(engine: TemplateEngine) -> None:
    bad = ingress("bad", {P + "configuration-snippet": "more_set_headers \"X: y\";\nreturn 200;",
                          P + "proxy-body-size": "lots", P + "no-such-thing": "1", P + "from-to-www-redirect": "true"},
                  host="bad.example.test")
    result = render(SPEC, engine, bad, *service("web"))
    notices = {(n.reason, n.field) for n in result.notices}
    assert notices == {
        ("AnnotationRefused", f"metadata.annotations[{P}configuration-snippet]"),
        ("AnnotationInvalid", f"metadata.annotations[{P}proxy-body-size]"),
        ("AnnotationUnknown", f"metadata.annotations[{P}no-such-thing]"),
        ("AnnotationIgnored", f"metadata.annotations[{P}from-to-www-redirect]"),
    }
    assert all(str(n.ref) == "Ingress ns/bad" and not n.excluded for n in result.notices)
    assert "more_set_headers" not in result.config and "return 200" not in result.config
    assert "bad.example.test/ ing_ns_bad_web_80" in result.aux.maps["path-prefix.map"]


@pytest.mark.parametrize(
    ("annotations", "needle"),
    [
        ({P + "upstream-vhost": "x.test\n    server evil 6.6.6.6:1"}, "6.6.6.6"),
        ({P + "rewrite-target": "/$1\nfrontend evil"}, "frontend evil"),
        ({P + "app-root": "/a\r\n    use_backend admin"}, "use_backend admin"),
        ({P + "custom-http-errors": "404\n    http-request return status 202"}, "return status 202"),
        ({P + "ssl-passthrough": "true\n    use_backend admin"}, "use_backend admin"),
    ],
)
def test_control_characters_exclude_the_ingress_like_the_ingress_library(
    engine: TemplateEngine, annotations: dict[str, str], needle: str
) -> None:
    result = render(SPEC, engine, ingress("evil", annotations, host="evil.example.test"),
                    ingress("good", {}, host="good.example.test"), *service("web"))
    assert needle not in result.config
    assert "_ns_evil_" not in result.config and "backend ing_ns_good_web_80" in result.config
    [notice] = result.notices
    assert notice.excluded and notice.reason == "UnsafeInput" and notice.field.startswith("metadata.annotations[")


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        ("rewrite-target", "/x %[src]"), ("rewrite-target", "/$host"), ("upstream-vhost", 'a" b'),
        ("permanent-redirect", "https://x/ code 200"), ("whitelist-source-range", "0.0.0.0/0 } || {"),
        ("cors-allow-origin", "https://*.example.com"), ("cors-allow-methods", "GET; deny"),
        ("auth-realm", 'x" deny'), ("canary-by-header", "X A"), ("session-cookie-name", "a;b"),
        ("limit-rps", "-1"), ("x-forwarded-prefix", "/a b"), ("backend-protocol", "FCGI"),
        # haproxy -c refuses default-errorfiles for a status it has no page for; a code never reaches a rule line
        ("custom-http-errors", "418"), ("custom-http-errors", "404 } || { always_true"),
    ],
)
def test_invalid_values_are_refused_with_a_warning_and_never_rendered(
    engine: TemplateEngine, annotation: str, value: str
) -> None:
    result = render(SPEC, engine, ingress("odd", {P + annotation: value}), *service("web"))
    assert value not in result.config
    field = f"metadata.annotations[{P}{annotation}]"
    assert [(n.reason, n.field) for n in result.notices] == [("AnnotationInvalid", field)]
    assert "backend ing_ns_odd_web_80" in result.config
    assert haproxy_check(result)[0]


def test_regex_paths_that_are_not_linear_or_not_safe_exclude_the_ingress(engine: TemplateEngine) -> None:
    hostile = ingress("evil", {P + "use-regex": "true"}, path="/a'b", path_type="ImplementationSpecific")
    backref = ingress("backref", {P + "use-regex": "true"}, path="/(a)\\1", path_type="ImplementationSpecific",
                      host="b.example.test")
    result = render(SPEC, engine, hostile, backref, *service("web"))
    assert {n.ref.name for n in result.notices if n.excluded} == {"evil", "backref"}
    assert result.aux.maps["path-regex.map"] == ""


def test_defaults_and_fallbacks_of_ingress_nginx(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("plain", {}, host="plain.example.test"),
                    ingress("upload", {P + "proxy-body-size": "0"}, host="upload.example.test"),
                    ingress("outage", {P + "default-backend": "web2"}, host="outage.example.test"),
                    ingress("sso", {P + "auth-url": "https://auth.example/check", P + "upstream-vhost": "x.test"},
                            host="sso.example.test"),
                    *service("web"), *service("web2"))
    valid, output = haproxy_check(result)
    assert valid and "Warnings were found" not in output, output
    config = result.config
    plain = config[config.index("backend ing_ns_plain_web_80"):config.index("backend ing_ns_sso_web_80")]
    assert "http-request deny deny_status 413 if { req.hdr_val(content-length) gt 1048576 }" in plain
    upload = config[config.index("backend ing_ns_upload_web_80"):]
    assert "deny_status 413" not in upload.split("\n\n")[0]
    assert ("use_backend ing_ns_outage_default_web2 if { var(txn.backend) -m str ing_ns_outage_web_80 } "
            "{ nbsrv(ing_ns_outage_web_80) eq 0 }") in config
    assert "backend ing_ns_outage_default_web2\n" in config
    sso = config[config.index("backend ing_ns_sso_web_80"):].split("\n\n")[0]
    assert "http-request deny deny_status 503" in sso and "set-header Host" not in sso


def test_canary_header_pattern_is_a_regex_match(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("main", {}),
                    ingress("beta", {P + "canary": "true", P + "canary-by-header": "X-Client",
                                     P + "canary-by-header-pattern": "^beta-[0-9]+$"}, service="web2",
                            created="2026-03-01T00:00:00Z"),
                    *service("web"), *service("web2"))
    assert ("str(ing_ns_beta_web2_80) if { var(txn.backend) -m str ing_ns_main_web_80 } "
            "{ req.hdr(X-Client) -m reg -- '^beta-[0-9]+$' }") in result.config
    assert haproxy_check(result)[0]


def test_missing_auth_secret_denies_with_a_warning(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("auth", {P + "auth-type": "basic", P + "auth-secret": "nope"}),
                    *service("web"))
    assert "http-request deny deny_status 503" in result.config
    assert [n.reason for n in result.notices] == ["AuthSecretNotFound"]
    assert haproxy_check(result)[0]


def test_auth_secret_of_another_namespace_is_not_read(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("auth", {P + "auth-type": "basic", P + "auth-secret": "other/basic"}),
                    *service("web"), opaque_secret("basic", {"auth": f"user:{HASH}\n"}))
    assert HASH not in result.config and "http-request deny deny_status 503" in result.config


def test_ingresses_of_other_classes_are_not_served(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("mine", {}), ingress("theirs", {}, host="x.example.test", cls="haptic"),
                    *service("web"))
    assert "ing_ns_mine_web_80" in result.config and "ing_ns_theirs_" not in result.config


def test_dialect_libraries_bring_their_bases_first() -> None:
    assert {"nginx", "annotations", "ingress"} <= set(available_libraries())
    assert with_bases(["nginx"]) == ["ingress", "annotations", "nginx"]
    assert with_bases(["ingress", "gateway", "nginx"]) == ["ingress", "gateway", "annotations", "nginx"]
    assert SPEC["templatingSettings"]["extraContext"]["ingressClass"] == "nginx"
    assert "extends" not in SPEC
    with pytest.raises(LibraryError):
        with_bases(["no-such-library"])


def test_unchanged_ingresses_keep_their_view_and_are_reported_again_on_every_render(engine: TemplateEngine) -> None:
    stores = stores_of(SPEC, ingress("bad", {P + "server-snippet": "x", P + "use-regex": "maybe"}), *service("web"))
    first, second = render_stores(SPEC, engine, stores), render_stores(SPEC, engine, stores)
    assert first.config == second.config
    assert sorted(n.reason for n in second.notices) == ["AnnotationInvalid", "AnnotationRefused"]
    stores["ingresses"].apply(ingress("bad", {P + "use-regex": "maybe"}))
    assert [n.reason for n in render_stores(SPEC, engine, stores).notices] == ["AnnotationInvalid"]


def test_ssl_passthrough_routes_by_server_name_only(engine: TemplateEngine) -> None:
    result = render(SPEC, engine, ingress("vault", {P + "ssl-passthrough": "true"}, host="vault.example.test"),
                    ingress("web", {}, host="web.example.test"), *service("web"))
    valid, output = haproxy_check(result)
    assert valid and "Warnings were found" not in output, output
    config = result.config
    assert "use_backend pt_ns_vault_web_80 if { req_ssl_sni -i vault.example.test }" in config
    assert "backend pt_ns_vault_web_80\n    mode tcp\n" in config and "backend ing_ns_vault_web_80" not in config
    assert "vault.example.test" not in result.aux.maps["path-prefix.map"]
    assert "web.example.test/ ing_ns_web_web_80" in result.aux.maps["path-prefix.map"]
    assert not result.notices
