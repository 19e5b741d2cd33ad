"""Pure parts of the local tier: config translation for a pod, config summaries, traffic verdicts,
the embedded demo config, loopback address allocation."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from haptic.config.models import load_config
from haptic.templating.libraries import expand_libraries
from simulator.local import objects
from simulator.local.events import events_from_log
from simulator.local.logs import LogFollower
from simulator.local.network import LoopbackNetwork, NetworkError
from simulator.local.pod import LocalHAProxyPod, translate_for_pod
from simulator.local.summary import config_shape
from simulator.local.traffic import TrafficReport

CONFIG = """global
    default-path origin /etc/haproxy
    log stdout format raw local0

frontend stats
    bind *:8404
frontend http
    bind :8080
    bind 0.0.0.0:8081 name plain
    bind [::]:8082
    bind 10.1.2.3:8083
    http-request set-var(txn.backend) var(txn.key),map(/etc/haproxy/maps/host.map)
    # /etc/haproxyfoo and /opt/etc/haproxy are not the root
    use_backend web

backend web
    server SRV_1 10.0.0.1:8080
    server SRV_2 127.0.0.1:1 disabled
    server SRV_3 127.0.0.1:1 disabled
"""


def translated() -> str:
    return translate_for_pod(CONFIG, pod_ip="127.9.9.10", storage_root="/tmp/pod-0/storage/")


def test_wildcard_binds_bind_the_pod_address() -> None:
    lines = translated().splitlines()
    assert "    bind 127.9.9.10:8404" in lines
    assert "    bind 127.9.9.10:8080" in lines
    assert "    bind 127.9.9.10:8081 name plain" in lines
    assert "    bind 127.9.9.10:8082" in lines
    assert "    bind 10.1.2.3:8083" in lines  # explicit addresses are the config's business


def test_storage_root_is_the_pods_directory() -> None:
    text = translated()
    assert "default-path origin /tmp/pod-0/storage\n" in text
    assert "map(/tmp/pod-0/storage/maps/host.map)" in text
    assert "/etc/haproxyfoo and /opt/etc/haproxy are not the root" in text


def test_translation_keeps_everything_else() -> None:
    original, result = CONFIG.splitlines(), translated().splitlines()
    assert len(original) == len(result)
    changed = [i for i, (a, b) in enumerate(zip(original, result, strict=True)) if a != b]
    assert [original[i].split()[0] for i in changed] == ["default-path", "bind", "bind", "bind", "bind", "http-request"]


def test_config_shape_lists_binds_and_enabled_servers() -> None:
    shape = config_shape(CONFIG)
    assert shape.frontends["http"] == [":8080", "0.0.0.0:8081", "[::]:8082", "10.1.2.3:8083"]
    assert [(b.name, b.servers, b.disabled) for b in shape.backends] == [("web", ["SRV_1 10.0.0.1:8080"], 2)]


@pytest.mark.parametrize(
    ("by_server", "statuses", "errors", "flowed"),
    [
        ({"a": 2, "b": 2}, {200: 4}, [], True),
        ({"a": 3}, {200: 3, 503: 1}, [], False),
        ({}, {404: 4}, [], False),
        ({"a": 3}, {200: 3}, ["ConnectError"], False),
    ],
)
def test_traffic_flows_only_when_every_request_reached_a_backend(
    by_server: dict[str, int], statuses: dict[int, int], errors: list[str], flowed: bool
) -> None:
    report = TrafficReport("127.0.0.1:1", "h", "/", 4, by_server, statuses, errors)
    assert report.flowed is flowed
    assert report.summary().startswith("4 x GET http://h/ via 127.0.0.1:1: ")


def test_demo_config_is_a_valid_config_once_the_library_is_expanded() -> None:
    cr = objects.demo_template_config("cfg", "haptic", pod_labels={"app": "haproxy"}, dataplane_port=5001,
                                      http_port=5002, https_port=5003, stats_port=5004, secret_name="creds")
    config = load_config(expand_libraries(cr))
    assert config.spec.dataplane.port == 5001
    assert config.spec.pod_selector.match_labels == {"app": "haproxy"}
    assert config.spec.templating_settings.extra_context["httpPort"] == 5002
    assert {"ingresses", "services", "endpoints"} <= set(config.spec.watched_resources)


def test_pod_object_is_discoverable() -> None:
    pod = LocalHAProxyPod.__new__(LocalHAProxyPod)
    pod.name, pod.ip, pod.dataplane_port, pod.namespace, pod.labels = "haproxy-0", "127.3.4.10", 5555, "ns", {"a": "b"}
    pod.restarts = 0
    obj = pod.pod_object(8080)
    assert obj["status"]["podIP"] == "127.3.4.10" and obj["status"]["phase"] == "Running"
    dataplane = [c for c in obj["spec"]["containers"] if any(p["containerPort"] == 5555 for p in c["ports"])]
    assert [c["name"] for c in dataplane] == ["dataplane"]
    assert {"name": "dataplane", "ready": True, "restartCount": 0} in obj["status"]["containerStatuses"]


def test_loopback_blocks_are_distinct_and_bounded() -> None:
    first, second = LoopbackNetwork(random.Random(1)), LoopbackNetwork(random.Random(2))
    assert first.prefix != second.prefix
    assert first.pod_ip(0).startswith(first.prefix + ".") and first.pod_ip(0) != first.echo_ip(0)
    with pytest.raises(NetworkError, match="outside the block"):
        first.echo_ip(200)
    port = first.free_port([first.pod_ip(0), first.pod_ip(1)])
    assert 0 < port < 65536


async def test_log_follower_hands_over_whole_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "haproxy.log"
    log.write_text("old line\n")
    seen: list[tuple[str, str]] = []
    follower = LogFollower("haproxy-0", log, lambda name, line: seen.append((name, line)), interval=3600)
    follower.start()
    with log.open("a") as handle:
        handle.write("first\nsecond half")
    follower.poll()
    assert seen == [("haproxy-0", "first")]
    with log.open("a") as handle:
        handle.write("-done\n")
    await follower.stop()
    assert seen == [("haproxy-0", "first"), ("haproxy-0", "second half-done")]


def test_domain_events_are_read_back_from_the_controller_log() -> None:
    lines = [
        'time=2026-01-01T00:00:01.000Z level=info logger=haptic.run msg="serving http://127.0.0.1:1"',
        'time=2026-01-01T00:00:02.000Z level=info logger=haptic.events msg="deployment.completed total=2 '
        'succeeded=2 failed=0 reason=\\"a b\\""',
        "time=2026-01-01T00:00:03.000Z level=info logger=haptic.events msg=\"index.synchronized  correlation_id=x\"",
        "not logfmt at all",
    ]
    events = events_from_log(lines)
    assert [(e.time, e.type) for e in events] == [("2026-01-01T00:00:02.000Z", "deployment.completed"),
                                                  ("2026-01-01T00:00:03.000Z", "index.synchronized")]
    assert events[0].fields == {"total": "2", "succeeded": "2", "failed": "0", "reason": "a b"}
    assert events[1].fields == {"correlation_id": "x"}
