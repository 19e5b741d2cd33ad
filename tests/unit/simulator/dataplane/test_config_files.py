"""``loaded_files``: every file a haproxy.cfg makes haproxy load, however the line spells it (the scan only
tokenizes lines that can name one; the others, most of a big config, are skipped unread)."""

from __future__ import annotations

from simulator.dataplane.config_files import FileRef, loaded_files

CONFIG = """global
    log stdout format raw local0
    # a comment naming map(/etc/haproxy/maps/ignored.map) loads nothing
defaults
    mode http
    errorfile 503 errors/503.http
frontend fe
    bind :443 ssl crt "certs/site.pem" crt-list lists/sni.lst
    acl blocked src -f "/etc/haproxy/lists/blocked.lst"
    http-request set-var(txn.b) req.hdr(host),map_str(maps/host.map,default)
    http-request set-map(maps/learned.map) %[src] %[req.hdr(host)]
    use_backend %[req.hdr(host),lower,map(maps/other.map)]
backend web
    server s1 10.0.0.1:80 check
    server s2 10.0.0.2:443 ssl ca-file ca/root.pem crl-file ca/root.crl
    default-server crt client.pem
global
    default-path origin /srv/haproxy
    crt-base tls
    ca-base trust
"""


def test_every_spelling_of_a_file_reference_is_found_and_resolved() -> None:
    crt_lists = {"/srv/haproxy/tls/lists/sni.lst": "a.pem [alpn h2] a.example\n\n"}
    files = loaded_files(CONFIG, crt_lists.get)
    assert list(files.refs) == [
        FileRef("error file", "errors/503.http", "/srv/haproxy/errors/503.http", 6),
        FileRef("certificate", "certs/site.pem", "/srv/haproxy/tls/certs/site.pem", 8),
        FileRef("crt-list", "lists/sni.lst", "/srv/haproxy/tls/lists/sni.lst", 8),
        FileRef("certificate", "a.pem", "/srv/haproxy/tls/a.pem", 8),
        FileRef("pattern file", "/etc/haproxy/lists/blocked.lst", "/etc/haproxy/lists/blocked.lst", 9),
        FileRef("map", "maps/host.map", "/srv/haproxy/maps/host.map", 10),
        FileRef("map", "maps/learned.map", "/srv/haproxy/maps/learned.map", 11),
        FileRef("map", "maps/other.map", "/srv/haproxy/maps/other.map", 12),
        FileRef("CA file", "ca/root.pem", "/srv/haproxy/trust/ca/root.pem", 15),
        FileRef("CRL file", "ca/root.crl", "/srv/haproxy/trust/ca/root.crl", 15),
        FileRef("certificate", "client.pem", "/srv/haproxy/tls/client.pem", 16),
    ]
    assert files.map_identifiers() == {"maps/host.map", "maps/learned.map", "maps/other.map"}


def test_a_config_without_file_references_loads_none() -> None:
    servers = "".join(f"    server s{i} 10.0.{i // 250}.{i % 250}:80 check weight 10\n" for i in range(500))
    assert loaded_files("defaults\n    mode http\nbackend b\n" + servers, lambda path: None).refs == ()
