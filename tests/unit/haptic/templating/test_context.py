"""Endpoints, server slots, the deployed-config reader, capabilities and path helpers."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.templating.capabilities import capabilities_from_version_output
from haptic.templating.context import (
    SLOT_SHRINK_QUIET,
    Endpoint,
    ServerSlots,
    StorageDirs,
    sanitize_filename,
    service_endpoints,
    slot_count,
)
from haptic.templating.current_config import coerce_current_config, parse_current_config
from haptic.templating.errors import TemplateFailure

SERVICE = {
    "metadata": {"name": "web"},
    "spec": {"ports": [{"name": "http", "port": 80}, {"name": "admin", "port": 81}]},
}


def slice_(port_name: str, port: int, *addresses: Any, ready: bool | None = None) -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {
        "ports": [{"name": port_name, "port": port}],
        "endpoints": [{"addresses": [a], "conditions": conditions} for a in addresses],
    }


def test_service_endpoints_resolve_port_by_number_and_name() -> None:
    slices = [slice_("http", 8080, "10.0.0.2", "10.0.0.10"), slice_("admin", 9000, "10.0.0.2")]
    expected = [Endpoint("10.0.0.2", 8080), Endpoint("10.0.0.10", 8080)]
    assert service_endpoints(SERVICE, {"number": 80}, slices) == expected
    assert service_endpoints(SERVICE, {"name": "admin"}, slices) == [Endpoint("10.0.0.2", 9000)]
    assert service_endpoints(SERVICE, 81, slices) == [Endpoint("10.0.0.2", 9000)]
    assert service_endpoints(SERVICE, {"number": 443}, slices) == []
    assert service_endpoints(None, {"number": 80}, slices) == []


def test_service_endpoints_drop_not_ready_duplicates_and_non_ip_addresses() -> None:
    slices = [
        slice_("http", 8080, "10.0.0.1", ready=True),
        slice_("http", 8080, "10.0.0.2", ready=False),
        slice_("http", 8080, "10.0.0.1", "evil\n server x", "fd00::1", "not-an-ip"),
        {"ports": [{"name": "http", "port": "8080; evil"}], "endpoints": [{"addresses": ["10.9.9.9"]}]},
    ]
    assert service_endpoints(SERVICE, {"number": 80}, slices) == [Endpoint("10.0.0.1", 8080), Endpoint("fd00::1", 8080)]


def test_server_slots_fill_in_order_with_disabled_placeholders() -> None:
    slots = ServerSlots(None).assign("be", [Endpoint("10.0.0.1", 80), Endpoint("10.0.0.2", 80)], 4)
    assert [s.spec for s in slots] == [
        "SRV_1 10.0.0.1:80",
        "SRV_2 10.0.0.2:80",
        "SRV_3 127.0.0.1:1 disabled",
        "SRV_4 127.0.0.1:1 disabled",
    ]


def test_server_slots_preserve_deployed_assignment() -> None:
    current = parse_current_config(
        "backend be\n"
        "    server SRV_1 10.0.0.3:80 check\n"
        "    server SRV_2 10.0.0.9:80\n"
        "    server SRV_3 10.0.0.1:80 disabled\n"
        "    server SRV_4 10.0.0.2:80\n"
        "backend other\n"
        "    server SRV_1 10.0.0.1:80\n"
    )
    endpoints = [Endpoint("10.0.0.1", 80), Endpoint("10.0.0.2", 80), Endpoint("10.0.0.3", 80)]
    slots = ServerSlots(current).assign("be", endpoints, 4)
    assert [s.spec for s in slots] == [
        "SRV_1 10.0.0.3:80",  # kept
        "SRV_2 10.0.0.1:80",  # freed by 10.0.0.9, taken by the newcomer (disabled slots are not kept)
        "SRV_3 127.0.0.1:1 disabled",
        "SRV_4 10.0.0.2:80",  # kept
    ]


def test_server_slots_grow_in_steps_and_reject_bad_counts() -> None:
    endpoints = [Endpoint(f"10.0.0.{i}", 80) for i in range(1, 12)]
    slots = ServerSlots(None).assign("be", endpoints, 5)
    assert len(slots) == 15 and sum(s.enabled for s in slots) == 11
    with pytest.raises(TemplateFailure, match="server slots"):
        ServerSlots(None).assign("be", endpoints, "lots")
    with pytest.raises(TemplateFailure, match="server slots"):
        ServerSlots(None).assign("be", endpoints, 0)


def _deployed(count: int, enabled: int) -> str:
    lines = [f"    server SRV_{i} 10.0.0.{i}:80" if i <= enabled else f"    server SRV_{i} 127.0.0.1:1 disabled"
             for i in range(1, count + 1)]
    return "backend be\n" + "\n".join(lines) + "\n"


def test_server_slots_never_shrink_by_themselves() -> None:
    current = parse_current_config(_deployed(20, 12))
    endpoints = [Endpoint("10.0.0.1", 80), Endpoint("10.0.0.5", 80)]
    slots = ServerSlots(current, compact=True)  # compacting, but nothing has been low for long: kept
    assigned = slots.assign("be", endpoints, 10)
    assert len(assigned) == 20 and [s.spec for s in assigned if s.enabled] == ["SRV_1 10.0.0.1:80", "SRV_5 10.0.0.5:80"]
    assert not slots.shrinkable


def test_server_slots_shrink_at_a_compact_render_after_the_quiet_period() -> None:
    current = parse_current_config(_deployed(20, 12))
    endpoints = [Endpoint("10.0.0.1", 80), Endpoint("10.0.0.5", 80), Endpoint("10.0.0.12", 80)]
    first = ServerSlots(current, now=1000.0)
    assert len(first.assign("be", endpoints, 10)) == 20 and not first.shrinkable
    almost = ServerSlots(current, now=1000.0 + SLOT_SHRINK_QUIET - 1, low_since=first.low_since)
    assert len(almost.assign("be", endpoints, 10)) == 20 and not almost.shrinkable
    quiet = ServerSlots(current, now=1000.0 + SLOT_SHRINK_QUIET, low_since=almost.low_since)
    assert len(quiet.assign("be", endpoints, 10)) == 20 and quiet.shrinkable  # kept until a reload anyway
    compact = ServerSlots(current, compact=True, now=1000.0 + SLOT_SHRINK_QUIET, low_since=quiet.low_since)
    assigned = compact.assign("be", endpoints, 10)
    assert len(assigned) == 10 and not compact.shrinkable
    # SRV_12 is gone, so its endpoint moves into the lowest free slot; the others stay where they were
    assert [s.spec for s in assigned if s.enabled] == ["SRV_1 10.0.0.1:80", "SRV_2 10.0.0.12:80", "SRV_5 10.0.0.5:80"]


def test_server_slots_quiet_period_restarts_when_endpoints_grow_back() -> None:
    current = parse_current_config(_deployed(20, 12))
    few, many = [Endpoint("10.0.0.1", 80)], [Endpoint(f"10.0.0.{i}", 80) for i in range(1, 9)]
    low = ServerSlots(current, now=0.0)
    low.assign("be", few, 10)
    back = ServerSlots(current, now=600.0, low_since=low.low_since)
    back.assign("be", many, 10)  # 8 endpoints do not fit in a quarter of 20: no longer low
    again = ServerSlots(current, now=SLOT_SHRINK_QUIET + 1, low_since=back.low_since)
    again.assign("be", few, 10)
    assert not again.shrinkable and again.low_since == {"be": SLOT_SHRINK_QUIET + 1}


def test_server_slots_grow_to_twice_the_deployed_count() -> None:
    current = parse_current_config(_deployed(20, 20))
    endpoints = [Endpoint(f"10.0.0.{i}", 80) for i in range(1, 22)]
    assigned = ServerSlots(current).assign("be", endpoints, 10)
    assert len(assigned) == 40 and sum(s.enabled for s in assigned) == 21


@pytest.mark.parametrize(("endpoints", "deployed", "compact", "expected"), [
    (2, 0, False, 10),  # first render: what the endpoints need
    (12, 0, False, 20),
    (12, 10, False, 20),  # growing from 10: twice 10 is also what 12 needs
    (21, 20, False, 40),  # growing from 20: twice, ahead of need
    (95, 20, False, 100),  # a jump beyond twice: what is needed
    (3, 20, False, 20),  # shrinking: kept
    (3, 20, True, 10),  # ... unless compacting
    (0, 10, False, 10),
])
def test_slot_count(endpoints: int, deployed: int, compact: bool, expected: int) -> None:
    assert slot_count(endpoints, 10, deployed, compact=compact) == expected


def test_parse_current_config_reads_backends_and_servers() -> None:
    parsed = parse_current_config(
        "global\n    maxconn 10\n# backend commented\nbackend a # trailing\n"
        "    server s1 [fd00::1]:8080 weight 10\n    server s2 unix@/x.sock\n\n"
        "frontend f\n    server not-a-backend 1.1.1.1:1\n"
    )
    assert list(parsed.backends) == ["a"]
    servers = parsed.backends["a"].servers
    assert (servers["s1"].address, servers["s1"].port, servers["s1"].disabled) == ("fd00::1", 8080, False)
    assert servers["s2"].port is None
    assert parsed.backend("missing") is None


def test_coerce_current_config_accepts_text_objects_and_none() -> None:
    class Holder:
        content = "backend x\n"

    assert coerce_current_config(None) is None
    assert coerce_current_config("  ") is None
    assert coerce_current_config(Holder()) is not None
    with pytest.raises(TypeError, match="cannot read"):
        coerce_current_config(42)


def test_capabilities_from_haproxy_version_output() -> None:
    caps = capabilities_from_version_output(
        "HAProxy version 2.6.12-1+deb12u4 2026/10/17\nFeature list : +EPOLL -QUIC +PROMEX +LUA\n"
    )
    assert caps["haproxy_version"] == "2.6.12" and caps["version_minor"] == 6
    assert caps["supports_quic"] is False and caps["supports_prometheus"] is True
    assert caps["supports_ocsp_update"] is False
    newer = capabilities_from_version_output("HAProxy version 3.1.2 2025\nFeature list : +QUIC")
    assert newer["supports_quic"] is True and newer["supports_ocsp_update"] is True
    assert capabilities_from_version_output("garbage")["haproxy_version"] == "2.6.0"


def test_storage_dirs_and_filename_sanitizing() -> None:
    dirs = StorageDirs.from_spec(None)
    assert dirs.base_dir == "/etc/haproxy" and dirs.dir_for("crt-list") == dirs.general_storage_dir
    with pytest.raises(ValueError, match="unknown file kind"):
        dirs.dir_for("exe")
    assert sanitize_filename("ns/my cert.pem") == "ns_my_cert.pem"
    assert sanitize_filename("noext") == "noext"


def test_coerce_current_config_from_a_parsed_config_object() -> None:
    class Directive:
        def __init__(self, *words: str) -> None:
            self.words = words

    class Section:
        name = "be"
        servers = {"SRV_1": Directive("server", "SRV_1", "10.0.0.1:80"), "SRV_2": Directive("server", "SRV_2")}

    class Parsed:
        def of_kind(self, kind: str) -> list[Section]:
            return [Section()] if kind == "backend" else []

    converted = coerce_current_config(Parsed())
    assert converted is not None
    assert list(converted.backends["be"].servers) == ["SRV_1"]
    assert converted.backends["be"].servers["SRV_1"].endpoint == "10.0.0.1:80"


def test_the_shared_log_is_every_write_in_order_whether_or_not_a_key_was_only_appended() -> None:
    """An appended-only key's list is its log (no second copy); a later ``set`` gives it a log of its own that
    starts with the values appended before."""
    from haptic.templating.context import LoggedWrite, SharedState

    shared = SharedState()
    shared.append("r", 1)
    shared.extend("r", [2, 3])
    assert list(shared.log(("v", "r"))) == [1, 2, 3] and shared.log_lengths()[("v", "r")] == 3
    before = list(shared.log(("v", "r")))
    shared.set("r", ["x"])
    log = list(shared.log(("v", "r")))
    assert log[:3] == before and isinstance(log[3], LoggedWrite) and log[3].value == ["x"]
    shared.append("r", 4)
    assert shared.get("r") == ["x", 4] and list(shared.log(("v", "r")))[4:] == [4]
    assert shared.log_lengths()[("v", "r")] == 5
    shared.set("s", [0])
    shared.append("s", 1)  # a set value is copied before its first append, and logged
    assert shared.get("s") == [0, 1] and [type(w).__name__ for w in shared.log(("v", "s"))] == ["LoggedWrite", "int"]
