"""Which port a traffic check goes to: the wildcard binds of a config's frontends, plain or TLS."""

from __future__ import annotations

from simulator.local.listeners import describe, listener_port, listeners

CONFIG = """global
    log stdout format raw local0

frontend stats
    bind *:8404
frontend http
    bind *:8080
frontend https
    bind *:8443 ssl crt-list /etc/haproxy/general/crt-list.txt alpn h2,http/1.1
listen admin
    bind 127.0.0.1:9000
    bind :9443 ssl crt /etc/haproxy/ssl/admin.pem

backend web
    server s1 10.0.0.1:80
"""


def test_listeners_are_the_wildcard_binds_of_frontends_and_listens() -> None:
    assert [(b.frontend, b.port, b.tls) for b in listeners(CONFIG)] == [
        ("stats", 8404, False), ("http", 8080, False), ("https", 8443, True), ("admin", 9443, True)]
    assert describe(CONFIG) == "stats:8404, http:8080, https:8443 ssl, admin:9443 ssl"


def test_port_by_name_and_kind() -> None:
    assert listener_port(CONFIG, tls=True) == 8443
    assert listener_port(CONFIG, tls=True, name="admin") == 9443
    assert listener_port(CONFIG, tls=False, name="http") == 8080
    assert listener_port(CONFIG, tls=True, name="http") is None
    assert listener_port("global\n", tls=False) is None
