"""Structural proofs against the real ``haproxy -c``: what the fast path accepts, HAProxy accepts too."""

from __future__ import annotations

from haptic.dataplane.aux_files import AuxFiles
from haptic.validation.haproxy_check import METHOD_HAPROXY, METHOD_STRUCTURAL, HAProxyValidator

BASE = """global
    log stdout format raw local0

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend web
    bind 127.0.0.1:18080
    http-request set-var(txn.b) req.hdr(host),lower,map(/etc/haproxy/maps/host.map,app)
    use_backend %[var(txn.b)]

backend app
    server SRV_1 10.0.0.1:8080 check
    server SRV_2 127.0.0.1:1 disabled
"""


def test_structurally_proven_configs_pass_haproxy(haproxy_bin: str) -> None:
    fast = HAProxyValidator(haproxy_bin, structural=True)
    full = HAProxyValidator(haproxy_bin)
    aux = AuxFiles(maps={"host.map": "a.example app\n"})
    assert fast.validate(BASE, aux).valid
    for old, new in [
        ("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 10.0.0.2:8080 weight 3"),
        ("server SRV_1 10.0.0.1:8080 check", "server SRV_1 [fd00::5]:9000 check disabled"),
    ]:
        changed = BASE.replace(old, new)
        changed_aux = AuxFiles(maps={"host.map": "a.example app\nb.example app\n"})
        proven = fast.validate(changed, changed_aux)
        assert proven.valid and proven.method == METHOD_STRUCTURAL, proven.structural_reason
        checked = full.validate(changed, changed_aux)
        assert checked.valid and checked.method == METHOD_HAPROXY, checked.summary()


def test_a_hostname_runs_haproxy_and_fails_when_unresolvable(haproxy_bin: str) -> None:
    fast = HAProxyValidator(haproxy_bin, structural=True)
    aux = AuxFiles(maps={"host.map": "a.example app\n"})
    assert fast.validate(BASE, aux).valid
    changed = BASE.replace("server SRV_2 127.0.0.1:1 disabled", "server SRV_2 no-such-host.invalid:80")
    result = fast.validate(changed, aux)
    assert result.method == METHOD_HAPROXY
    assert "not an IP literal" in result.structural_reason
    assert not result.valid
