"""Component logic in isolation: debounce, scheduling decisions, discovery eligibility, publishing, logging."""

from __future__ import annotations

import itertools
import logging

import pytest

from haptic.config.credentials import Credentials
from haptic.controller.deploy.discovery import endpoint_url, pod_endpoint
from haptic.controller.deploy.scheduler import DeploymentScheduler
from haptic.controller.events import (
    DataplaneEndpoint,
    DeploymentCompleted,
    DeploymentScheduled,
    HAProxyPodsDiscovered,
    IndexSynchronized,
    ReconciliationTriggered,
    ResourceIndexUpdated,
    TemplateRendered,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.controller.observe.commentator import level_of, summarize
from haptic.controller.publish.content import decode_content, encode_content
from haptic.controller.reconcile.coordinator import merged_reason
from haptic.controller.reconcile.reconciler import Reconciler
from haptic.core import EventBus, VirtualClock
from haptic.dataplane.aux_files import AuxFiles
from simulator.cluster_objects import haproxy_pod
from tests.support.controller import make_ctx, started_bus

pytestmark = pytest.mark.looptime


# -- reconciler ------------------------------------------------------------------------------------


async def test_reconciler_leading_edge_then_one_trailing_trigger() -> None:
    ctx = make_ctx()
    bus = started_bus()
    out = bus.subscribe("out", types=(ReconciliationTriggered,))
    rec = Reconciler(bus, ctx, debounce=5.0)
    await rec.start()
    bus.publish(IndexSynchronized(resource_counts={}))
    for _ in range(50):
        bus.publish(ResourceIndexUpdated(resource_type="ingresses", modified=1))
    await VirtualClock().sleep(0.1)
    reasons = [e.reason for e in out.drain()]  # type: ignore[attr-defined]
    assert reasons == ["index_synchronized", "resource_change"]
    await VirtualClock().sleep(5)
    assert [e.reason for e in out.drain()] == ["debounce_timer"]  # type: ignore[attr-defined]
    await VirtualClock().sleep(6)
    assert out.drain() == []
    await rec.stop()


async def test_reconciler_window_grows_under_a_stream_and_shrinks_when_quiet() -> None:
    ctx = make_ctx()
    bus = started_bus()
    out = bus.subscribe("out", types=(ReconciliationTriggered,))
    rec = Reconciler(bus, ctx, debounce=5.0, min_debounce=0.25)
    await rec.start()
    bus.publish(IndexSynchronized(resource_counts={}))
    clock = VirtualClock()
    times = []
    for _ in range(300):  # a change every 0.1 s for 30 s
        bus.publish(ResourceIndexUpdated(resource_type="ingresses", modified=1))
        await clock.sleep(0.1)
        times += [clock.monotonic() for e in out.drain() if e.reason != "index_synchronized"]  # type: ignore[attr-defined]
    # windows 0.25, 0.5, 1, 2, 4, then 5 s: a render at once, then at most one per 5 s of the stream
    # (seen at the 0.1 s steps of the stream)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    expected = [0.25, 0.5, 1.0, 2.0, 4.0] + [5.0] * 4
    assert len(gaps) == len(expected) and all(abs(g - e) <= 0.1 for g, e in zip(gaps, expected, strict=True)), gaps
    assert rec.window == 5.0
    windows = [rec.next_window()]
    for _ in range(300):  # quiet: the window closing on nothing, then each window length of quiet, halve it
        await clock.sleep(0.1)
        if rec.next_window() != windows[-1]:
            windows.append(rec.next_window())
    assert windows == [5.0, 2.5, 1.25, 0.625, 0.3125, 0.25]
    out.drain()
    bus.publish(ResourceIndexUpdated(resource_type="ingresses", modified=1))
    await clock.sleep(0.01)
    assert [e.reason for e in out.drain()] == ["resource_change"]  # type: ignore[attr-defined]  # quiet: at once
    await rec.stop()


async def test_reconciler_does_not_delay_endpoint_slices_nor_react_to_pods() -> None:
    ctx = make_ctx()
    bus = started_bus()
    out = bus.subscribe("out", types=(ReconciliationTriggered,))
    rec = Reconciler(bus, ctx, debounce=5.0)
    await rec.start()
    bus.publish(IndexSynchronized(resource_counts={}))
    bus.publish(ResourceIndexUpdated(resource_type="ingresses", modified=1))
    bus.publish(ResourceIndexUpdated(resource_type="endpoints", modified=1))
    bus.publish(ResourceIndexUpdated(resource_type="endpoints", modified=1))
    bus.publish(ResourceIndexUpdated(resource_type="haproxy-pods", modified=1))
    await VirtualClock().sleep(0.1)
    assert [e.reason for e in out.drain()] == ["index_synchronized", "resource_change", "resource_change",  # type: ignore[attr-defined]
                                                "resource_change"]
    await rec.stop()


def test_merged_reason_keeps_drift_and_non_coalescible() -> None:
    drift = ReconciliationTriggered(reason="drift_prevention", coalescible=False)
    change = ReconciliationTriggered(reason="resource_change")
    timer = ReconciliationTriggered(reason="debounce_timer")
    assert merged_reason([change, drift, timer]) == ("drift_prevention", False)
    assert merged_reason([change, timer]) == ("debounce_timer", True)
    assert merged_reason([change, ReconciliationTriggered(reason="became_leader", coalescible=False)]) == (
        "became_leader", False)


# -- scheduler -------------------------------------------------------------------------------------

EP = (DataplaneEndpoint("http://10.0.0.1:5555/v3", "p0", "haptic"),)


async def validated(bus: EventBus, checksum: str, reason: str = "resource_change") -> None:
    config, aux = f"# {checksum}\n", AuxFiles()
    bus.publish(TemplateRendered(haproxy_config=config, content_checksum=checksum, trigger_reason=reason,
                                 auxiliary_files=aux))
    bus.publish(ValidationCompleted(content_checksum=checksum, haproxy_config=config, auxiliary_files=aux,
                                    trigger_reason=reason))
    await VirtualClock().sleep(0)
    await VirtualClock().sleep(0)


async def test_scheduler_skips_unchanged_rate_limits_and_latest_wins() -> None:
    ctx = make_ctx()
    bus = started_bus()
    out = bus.subscribe("out", types=(DeploymentScheduled,))
    sched = DeploymentScheduler(bus, ctx)
    await sched.start()
    await validated(bus, "aaaa")
    assert out.drain() == [], "no pods known yet"
    bus.publish(HAProxyPodsDiscovered(endpoints=EP))
    await VirtualClock().sleep(0.01)
    first = out.drain()
    assert [e.content_checksum for e in first] == ["aaaa"]  # type: ignore[attr-defined]
    # While deploying: two newer configs, only the latest is kept.
    await validated(bus, "bbbb")
    await validated(bus, "cccc")
    assert out.drain() == []
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0))
    await VirtualClock().sleep(0.5)
    assert out.drain() == [], "min deployment interval (2s) not elapsed"
    await VirtualClock().sleep(2)
    assert [e.content_checksum for e in out.drain()] == ["cccc"]  # type: ignore[attr-defined]
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0))
    await VirtualClock().sleep(3)
    await validated(bus, "cccc")
    assert out.drain() == [], "same checksum, same pods: skipped"
    await validated(bus, "cccc", reason="drift_prevention")
    drift = out.drain()
    assert [e.reason for e in drift] == ["drift_prevention"]  # type: ignore[attr-defined]
    await sched.stop()


async def test_scheduler_falls_back_to_last_good_on_failed_drift_validation() -> None:
    ctx = make_ctx()
    bus = started_bus()
    out = bus.subscribe("out", types=(DeploymentScheduled,))
    sched = DeploymentScheduler(bus, ctx)
    await sched.start()
    bus.publish(HAProxyPodsDiscovered(endpoints=EP))
    await validated(bus, "good")
    assert len(out.drain()) == 1
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0))
    await VirtualClock().sleep(3)
    bus.publish(TemplateRendered(haproxy_config="bad", content_checksum="bad", trigger_reason="drift_prevention",
                                 auxiliary_files=AuxFiles()))
    bus.publish(ValidationFailed(errors=("nope",), content_checksum="bad", trigger_reason="drift_prevention"))
    await VirtualClock().sleep(0.01)
    again = out.drain()
    assert [e.content_checksum for e in again] == ["good"]  # type: ignore[attr-defined]
    await sched.stop()


async def test_scheduler_watchdog_cancels_stuck_deployment() -> None:
    ctx = make_ctx(deploymentTimeout="30s")
    bus = started_bus()
    cancels = bus.subscribe("cancels", types=("deployment.cancel.request", "reconciliation.triggered"))
    sched = DeploymentScheduler(bus, ctx)
    await sched.start()
    bus.publish(HAProxyPodsDiscovered(endpoints=EP))
    await validated(bus, "aaaa")
    await VirtualClock().sleep(31)
    assert [e.type for e in cancels.drain()] == ["deployment.cancel.request", "reconciliation.triggered"]
    assert not sched.deploying
    await sched.stop()


# -- discovery -------------------------------------------------------------------------------------


def test_pod_endpoint_requires_running_ip_and_ready_dataplane() -> None:
    pod = haproxy_pod("p0", "10.0.0.5")
    assert pod_endpoint(pod, 5555) == DataplaneEndpoint("http://10.0.0.5:5555/v3", "p0", "haptic")
    not_ready = haproxy_pod("p0", "10.0.0.5", ready=False)
    assert pod_endpoint(not_ready, 5555) is None
    pending = haproxy_pod("p0", "10.0.0.5")
    pending["status"]["phase"] = "Pending"
    assert pod_endpoint(pending, 5555) is None
    deleting = haproxy_pod("p0", "10.0.0.5")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert pod_endpoint(deleting, 5555) is None
    assert pod_endpoint(pod, 9999) is None, "no container exposes that port"
    assert endpoint_url("fd00::1", 5555) == "http://[fd00::1]:5555/v3"


# -- publisher, commentator ------------------------------------------------------------------------


def test_content_is_compressed_above_threshold_only() -> None:
    small, compressed = encode_content("global\n", 100)
    assert (small, compressed) == ("global\n", False)
    text = "backend b\n" * 1000
    stored, compressed = encode_content(text, 100)
    assert compressed and len(stored) < len(text)
    assert decode_content(stored, True) == text


def test_commentator_levels_and_summary_hide_secrets() -> None:
    from pydantic import SecretStr

    from haptic.controller.events import CredentialsUpdated

    assert level_of(ValidationFailed(errors=("x",))) == logging.ERROR
    assert level_of(DeploymentCompleted(total=1, succeeded=1, failed=0, total_api_operations=0)) == logging.DEBUG
    assert level_of(DeploymentCompleted(total=1, succeeded=1, failed=0, total_api_operations=3)) == logging.INFO
    from haptic.controller.events import LostLeadership

    assert level_of(LostLeadership(identity="a", reason="lease_lost")) == logging.WARNING
    assert level_of(LostLeadership(identity="a", reason="stopped")) == logging.INFO
    event = CredentialsUpdated(secret_version="v2", credentials=Credentials(username="u",
                                                                            password=SecretStr("hunter2")))
    assert "hunter2" not in summarize(event) and "secret_version=v2" in summarize(event)


def test_the_stored_size_of_a_text_is_its_utf8_length_ascii_or_not() -> None:
    from haptic.core.utf8 import SLICE, utf8_size

    for text in ("", "backend be\n", "héllo", "日本\n", "\x7f", "é" * (2 * SLICE + 3)):
        assert utf8_size(text) == len(text.encode())


def test_compressed_content_is_one_zstd_frame_with_its_size_whatever_its_length() -> None:
    import base64

    import zstandard

    from haptic.core.utf8 import SLICE

    for text in ("x" * 200, "backend é\n" * (SLICE // 3), "日" * (3 * SLICE + 1)):
        stored, compressed = encode_content(text, 100)
        frame = base64.b64decode(stored)
        assert compressed and zstandard.frame_content_size(frame) == len(text.encode())
        assert zstandard.ZstdDecompressor().decompress(frame).decode() == text
