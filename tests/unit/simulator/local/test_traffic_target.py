"""Which port a traffic check goes to: the plain-HTTP frontend that serves the host, never the stats
frontend the shipped Ingress library binds first."""

from __future__ import annotations

from simulator.local.traffic import plain_frontends, serving_port

LIBRARY_SHAPE = """\
global
    maxconn 100
defaults
    mode http
frontend stats
    bind *:8404
    http-request return status 200 content-type text/plain string ok if { path /healthz }
    stats enable
frontend http
    bind *:8080
    http-request set-var(txn.backend) var(txn.key),map(maps/path-exact.map) if !{ var(txn.backend) -m found }
    use_backend %[var(txn.backend)] if { var(txn.backend) -m found }
    default_backend haptic_default
frontend https
    bind *:8443 ssl crt-list /etc/haproxy/general/crt-list.txt alpn h2,http/1.1
    default_backend haptic_default
backend haptic_default
    http-request return status 404
"""


def test_the_routing_frontend_wins_over_the_stats_frontend_bound_first() -> None:
    assert serving_port(LIBRARY_SHAPE, "web.example") == 8080


def test_tls_binds_are_not_plain_http() -> None:
    frontends = {f.name: f for f in plain_frontends(LIBRARY_SHAPE)}
    assert frontends["https"].ports == () and frontends["stats"].ports == (8404,)
    assert frontends["http"].routes and not frontends["stats"].routes


def test_a_frontend_naming_the_host_wins() -> None:
    config = LIBRARY_SHAPE.replace("frontend https", """frontend api
    bind :9090
    use_backend be_api if { hdr(host) -i api.example }
frontend https""")
    assert serving_port(config, "api.example") == 9090
    assert serving_port(config, "xapi.example") == 8080, "a longer host is not this host"


def test_without_a_routing_frontend_the_first_wildcard_bind_and_none_without_any() -> None:
    assert serving_port("frontend stats\n    bind *:8404\n    stats enable\n", "web.example") == 8404
    assert serving_port("frontend f\n    bind 10.0.0.1:80\n    default_backend b\n", "web.example") is None



PASSTHROUGH_SHAPE = """\
defaults
    mode http
frontend http
    bind *:8080
    use_backend %[var(txn.backend)] if { var(txn.backend) -m found }
    default_backend haptic_default
frontend https
    bind abns@haptic-https accept-proxy ssl crt-list /etc/haproxy/general/crt-list.txt alpn h2,http/1.1
    default_backend haptic_default
frontend https-passthrough
    mode tcp
    bind *:8443
    use_backend pt_default_vault_web_80 if { req_ssl_sni -i vault.example }
backend haptic_default
    http-request return status 404
"""


def test_a_tcp_frontend_is_not_plain_http_even_when_it_names_the_host() -> None:
    # ssl-passthrough's SNI frontend names the host and binds without ssl, but speaks TLS (mode tcp): plain HTTP
    # to vault.example goes to the http frontend (which answers 404), not into the passthrough frontend.
    assert serving_port(PASSTHROUGH_SHAPE, "vault.example") == 8080
    assert {f.name: f.ports for f in plain_frontends(PASSTHROUGH_SHAPE)}["https-passthrough"] == ()
