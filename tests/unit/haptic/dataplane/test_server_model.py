"""Server line <-> Dataplane API v3 server model."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.dataplane import RUNTIME_SERVER_FIELDS, ConfigParseError, model_to_server_line, server_to_model
from haptic.dataplane.server_model import EXTRA_PARAMS, runtime_only_change, split_address


def test_basic_fields() -> None:
    model = server_to_model("server srv1 10.0.0.1:8080 check weight 10 maxconn 100")
    assert model == {
        "name": "srv1",
        "address": "10.0.0.1",
        "port": 8080,
        "check": "enabled",
        "weight": 10,
        "maxconn": 100,
    }


def test_maintenance_from_disabled_and_enabled() -> None:
    assert server_to_model("server s 127.0.0.1:1 disabled")["maintenance"] == "enabled"
    assert server_to_model("server s 127.0.0.1:1 enabled")["maintenance"] == "disabled"
    assert "maintenance" not in server_to_model("server s 127.0.0.1:1")


def test_agent_and_health_check_fields() -> None:
    model = server_to_model(
        'server s 10.0.0.1:80 check port 8081 addr 10.0.0.9 agent-check agent-addr 10.0.0.2 agent-port 5555 '
        'agent-send "ping\\n" agent-inter 3s'
    )
    assert model["health_check_port"] == 8081
    assert model["health_check_address"] == "10.0.0.9"
    assert model["agent-check"] == "enabled"
    assert model["agent-addr"] == "10.0.0.2"
    assert model["agent-port"] == 5555
    assert model["agent-send"] == "ping\n"
    assert model["agent-inter"] == 3000


@pytest.mark.parametrize(
    ("word", "key", "value"),
    [
        ("inter 2s", "inter", 2000),
        ("inter 500", "inter", 500),
        ("inter 250ms", "inter", 250),
        ("fastinter 1m", "fastinter", 60_000),
        ("slowstart 1h", "slowstart", 3_600_000),
        ("rise 2", "rise", 2),
        ("fall 3", "fall", 3),
        ("backup", "backup", "enabled"),
        ("no-backup", "backup", "disabled"),
        ("no-check", "check", "disabled"),
        ("ssl", "ssl", "enabled"),
        ("no-ssl", "ssl", "disabled"),
        ("verify none", "verify", "none"),
        ("sni req.hdr(host)", "sni", "req.hdr(host)"),
        ("ca-file /etc/ca.pem", "ssl_cafile", "/etc/ca.pem"),
        ("crt /etc/c.pem", "ssl_certificate", "/etc/c.pem"),
        ("send-proxy-v2", "send-proxy-v2", "enabled"),
        ("check-ssl", "check-ssl", "enabled"),
        ("resolvers kube", "resolvers", "kube"),
        ("init-addr last,libc,none", "init-addr", "last,libc,none"),
        ("resolve-net 10.0.0.0/8", "resolve-net", "10.0.0.0/8"),
        ("proxy-v2-options ssl,cert-cn", "proxy-v2-options", ["ssl", "cert-cn"]),
        ("allow-0rtt", "allow_0rtt", True),
        ("cookie abc", "cookie", "abc"),
        ("id 12", "id", 12),
        ("proto h2", "proto", "h2"),
        ("alpn h2,http/1.1", "alpn", "h2,http/1.1"),
        ("no-tlsv10", "no_tlsv10", "enabled"),
        ("inter 10us", "inter", "10us"),
    ],
)
def test_known_parameters(word: str, key: str, value: Any) -> None:
    model = server_to_model(f"server s 127.0.0.1:80 {word}")
    assert model[key] == value
    assert server_to_model(model_to_server_line(model)) == model


def test_unknown_words_are_kept_in_order() -> None:
    model = server_to_model("server s 127.0.0.1:80 check frobnicate 7 whatever weight 3")
    assert model[EXTRA_PARAMS] == ["frobnicate", "7", "whatever"]
    assert model["weight"] == 3
    line = model_to_server_line(model)
    assert line.endswith("frobnicate 7 whatever")


def test_value_keyword_without_value_is_kept_verbatim() -> None:
    model = server_to_model("server s 127.0.0.1:80 weight")
    assert "weight" not in model
    assert model[EXTRA_PARAMS] == ["weight"]


@pytest.mark.parametrize(
    ("endpoint", "address", "port"),
    [
        ("10.0.0.1:80", "10.0.0.1", 80),
        ("10.0.0.1", "10.0.0.1", None),
        ("backend.svc.cluster.local:8080", "backend.svc.cluster.local", 8080),
        ("[2001:db8::1]:443", "2001:db8::1", 443),
        ("[2001:db8::1]", "2001:db8::1", None),
        ("2001:db8::1:443", "2001:db8::1", 443),
        ("/var/run/app.sock", "/var/run/app.sock", None),
        ("unix@/var/run/app.sock", "unix@/var/run/app.sock", None),
        ("10.0.0.1:+100", "10.0.0.1:+100", None),
        ("ipv4@10.0.0.1:80", "ipv4@10.0.0.1", 80),
    ],
)
def test_addresses(endpoint: str, address: str, port: int | None) -> None:
    assert split_address(endpoint) == (address, port)
    model = server_to_model(f"server s {endpoint}")
    assert model["address"] == address
    assert model.get("port") == port
    assert server_to_model(model_to_server_line(model)) == model


ROUND_TRIP_LINES = [
    "server SRV_1 127.0.0.1:1 disabled",
    "server web-1 10.1.2.3:8080 check inter 2000 rise 2 fall 3 weight 100 maxconn 50",
    "server s 10.0.0.1:443 alpn h2 ssl verify required sni str(example.com) ca-file /etc/ca.pem",
    "server s 10.0.0.1:80 backup no-check send-proxy",
    "server s 10.0.0.1:80 agent-check agent-addr 10.0.0.2 agent-port 9999 agent-send \"hello world\"",
    "server s app.default.svc:80 resolvers kube resolve-prefer ipv4 init-addr none check",
    "server s 10.0.0.1:80 cookie c1 id 4 on-marked-down shutdown-sessions slowstart 10000",
    "server s 10.0.0.1:80 weight 5 unknown-flag some value",
]


@pytest.mark.parametrize("line", ROUND_TRIP_LINES)
def test_round_trip_is_stable(line: str) -> None:
    model = server_to_model(line)
    rendered = model_to_server_line(model)
    assert server_to_model(rendered) == model
    assert model_to_server_line(server_to_model(rendered)) == rendered


def test_canonical_lines_render_unchanged() -> None:
    for line in ROUND_TRIP_LINES[:3]:
        assert model_to_server_line(server_to_model(line)) == line


def test_ipv6_renders_with_brackets() -> None:
    assert model_to_server_line({"name": "s", "address": "::1", "port": 80}) == "server s [::1]:80"
    assert model_to_server_line({"name": "s", "address": "::1"}) == "server s [::1]"
    assert model_to_server_line({"name": "s", "address": "ipv6@::1", "port": 80}) == "server s ipv6@::1:80"


def test_parameter_order_does_not_change_the_model() -> None:
    first = server_to_model("server s 10.0.0.1:80 weight 3 check")
    assert first == server_to_model("server s 10.0.0.1:80 check weight 3")


def test_rendering_quotes_values_that_need_it() -> None:
    line = model_to_server_line({"name": "s", "address": "10.0.0.1", "port": 80, "agent-send": 'say "hi"\n'})
    assert line == 'server s 10.0.0.1:80 agent-send "say \\"hi\\"\\n"'
    assert server_to_model(line)["agent-send"] == 'say "hi"\n'


def test_model_to_line_requires_name_and_address() -> None:
    with pytest.raises(ValueError, match="address"):
        model_to_server_line({"name": "s"})
    with pytest.raises(ValueError, match="name"):
        model_to_server_line({"address": "10.0.0.1"})


@pytest.mark.parametrize("line", ["server s", "server s check", "bind :80", ""])
def test_bad_server_lines(line: str) -> None:
    with pytest.raises(ConfigParseError):
        server_to_model(line)


def test_runtime_fields_are_exactly_the_dataplane_api_ones() -> None:
    assert frozenset(
        {"weight", "address", "port", "maintenance", "agent-check", "agent-addr", "agent-send", "health_check_port"}
    ) == RUNTIME_SERVER_FIELDS


@pytest.mark.parametrize(
    ("before", "after", "runtime"),
    [
        ("server s 10.0.0.1:80 check", "server s 10.0.0.2:80 check", True),
        ("server s 10.0.0.1:80 check", "server s 10.0.0.1:81 check", True),
        ("server s 10.0.0.1:80 weight 1", "server s 10.0.0.1:80 weight 50", True),
        ("server s 127.0.0.1:1 disabled", "server s 10.0.0.7:8080", True),
        ("server s 10.0.0.1:80", "server s 10.0.0.1:80 agent-check agent-send ping", True),
        ("server s 10.0.0.1:80 check port 81", "server s 10.0.0.1:80 check port 82", True),
        ("server s 10.0.0.1:80 check inter 2s", "server s 10.0.0.1:80 check inter 3s", False),
        ("server s 10.0.0.1:80 maxconn 10", "server s 10.0.0.1:80 maxconn 20", False),
        ("server s 10.0.0.1:80", "server s 10.0.0.1:80 check", False),
        ("server s 10.0.0.1:80", "server s 10.0.0.1:80 agent-port 99", False),
        ("server s 10.0.0.1:80", "server s 10.0.0.2:80 ssl", False),
    ],
)
def test_runtime_only_change(before: str, after: str, runtime: bool) -> None:
    assert runtime_only_change(server_to_model(before), server_to_model(after)) is runtime
