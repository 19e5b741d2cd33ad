"""Configs the parser accepts are ones the real HAProxy accepts, and rendered server lines are valid.

Only ``haproxy -c`` runs here: nothing binds, so the listener ports in these configs are never opened.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from haptic.dataplane import model_to_server_line, parse_config, plan, server_to_model
from tests.support.realworld import REALWORLD_CFG

pytestmark = pytest.mark.haproxy


def haproxy_check(haproxy_bin: str, tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    return subprocess.run([haproxy_bin, "-c", "-f", str(path)], capture_output=True, text=True, timeout=60)


def generated(backends: int) -> str:
    lines = ["defaults", "  mode http", "  timeout connect 5s", "  timeout client 30s", "  timeout server 30s"]
    lines += ["frontend http", "  bind 127.0.0.1:18080 name http"]
    lines += [f"  use_backend b{b} if {{ req.hdr(host) -i b{b}.example }}" for b in range(backends)]
    for b in range(backends):
        lines += [f"backend b{b}", "  balance roundrobin", "  default-server check inter 2s"]
        lines += [f"  server SRV_{s} 127.0.{b % 250}.{s + 1}:8080 weight 1" for s in range(10)]
    return "\n".join(lines) + "\n"


def test_realworld_config_is_valid_haproxy_and_parses(haproxy_bin: str, tmp_path: Path) -> None:
    result = haproxy_check(haproxy_bin, tmp_path, REALWORLD_CFG)
    assert result.returncode == 0, result.stdout + result.stderr
    config = parse_config(REALWORLD_CFG)
    assert len(config.backends) == 3 and len(config.frontends) == 1


def test_generated_large_config_is_valid_and_plans(haproxy_bin: str, tmp_path: Path) -> None:
    text = generated(50)
    result = haproxy_check(haproxy_bin, tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sum(len(b.servers) for b in parse_config(text).backends.values()) == 500
    desired = text.replace("server SRV_3 127.0.7.4:8080", "server SRV_3 127.0.7.99:8080")
    changed = plan(text, desired)
    assert [op.description for op in changed.operations] == ["Update server 'SRV_3' in backend 'b7'"]
    assert not changed.reload_required


RENDERABLE = [
    {"name": "a", "address": "127.0.0.1", "port": 8080, "check": "enabled", "inter": 2000, "weight": 10},
    {"name": "b", "address": "127.0.0.1", "port": 1, "maintenance": "enabled"},
    {"name": "c", "address": "::1", "port": 8080, "backup": "enabled", "check": "disabled"},
    {"name": "d", "address": "127.0.0.1", "port": 80, "agent-check": "enabled", "agent-port": 5555,
     "agent-send": "ping\n", "agent-addr": "127.0.0.2", "health_check_port": 8081, "check": "enabled"},
    {"name": "e", "address": "127.0.0.1", "port": 443, "ssl": "enabled", "verify": "none", "sni": "str(example.com)",
     "alpn": "h2,http/1.1", "maxconn": 100, "slowstart": 10000, "rise": 2, "fall": 3},
    {"name": "f", "address": "127.0.0.1", "port": 80, "send-proxy-v2": "enabled", "cookie": "f1", "id": 42},
    {"name": "g", "address": "/tmp/app.sock"},
]


def test_rendered_server_lines_are_valid_haproxy(haproxy_bin: str, tmp_path: Path) -> None:
    servers = "".join(f"  {model_to_server_line(model)}\n" for model in RENDERABLE)
    text = (
        "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\n"
        "frontend fe\n  bind 127.0.0.1:18080\n  default_backend be\n"
        f"backend be\n  cookie SRV insert\n{servers}"
    )
    result = haproxy_check(haproxy_bin, tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr
    parsed = parse_config(text).backends["be"].servers
    assert [server_to_model(d.text) for d in parsed.values()] == RENDERABLE
