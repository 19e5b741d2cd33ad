"""Lease elector under virtual time (looptime): exact failover, single leader, 409 races."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from haptic.core import VirtualClock
from haptic.k8s.leaderelection import LEASES, ElectionConfig, LeaderElector, Transition, format_micro_time
from tests.support.memkube import MemKube, MemKubeClient

pytestmark = pytest.mark.looptime

NS = "haptic"
LEASE = "haptic-leader"


@dataclass
class Candidate:
    name: str
    client: MemKubeClient
    elector: LeaderElector
    task: asyncio.Task[None] | None = None
    log: list[Transition] = field(default_factory=list)
    killed_at: float | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run(), name=self.name)

    async def kill(self) -> None:
        """A crash: the task dies without releasing the Lease."""
        assert self.task is not None
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task
        self.killed_at = asyncio.get_running_loop().time()

    def times(self, kind: str) -> list[float]:
        return [t.at for t in self.log if t.kind == kind]


def make(store: MemKube, name: str, **timings: float) -> Candidate:
    client = store.client(name)
    elector = LeaderElector(client, ElectionConfig(LEASE, NS, name, **timings), VirtualClock())
    candidate = Candidate(name, client, elector)
    elector.on_transition(candidate.log.append)
    return candidate


def leadership_intervals(candidates: list[Candidate], end: float) -> list[tuple[float, float, str]]:
    intervals = []
    for c in candidates:
        start: float | None = None
        for t in c.log:
            if t.kind == "became_leader":
                start = t.at
            elif t.kind == "lost_leadership" and start is not None:
                intervals.append((start, t.at, c.name))
                start = None
        if start is not None:
            intervals.append((start, c.killed_at if c.killed_at is not None else end, c.name))
    return sorted(intervals)


def assert_single_leader(candidates: list[Candidate], end: float) -> list[tuple[float, float, str]]:
    intervals = leadership_intervals(candidates, end)
    for (s1, e1, n1), (s2, e2, n2) in itertools.pairwise(intervals):
        assert e1 <= s2, f"{n1} led [{s1}, {e1}] and {n2} led [{s2}, {e2}] at the same time"
    return intervals


def lease_spec(store: MemKube) -> dict[str, object]:
    return dict(store.objects[(str(LEASES), NS, LEASE)]["spec"])


async def stop_all(candidates: list[Candidate]) -> None:
    for c in candidates:
        if c.task is not None and not c.task.done():
            await c.elector.stop()
            await c.task


async def sleep_until(moment: float) -> None:
    await asyncio.sleep(moment - asyncio.get_running_loop().time())


async def test_single_candidate_acquires_renews_and_releases() -> None:
    store = MemKube()
    a = make(store, "a")
    a.start()
    await sleep_until(0.5)
    assert a.elector.is_leader
    assert a.times("became_leader") == [0.0]
    spec = lease_spec(store)
    assert spec["holderIdentity"] == "a"
    assert spec["leaseTransitions"] == 0
    assert spec["leaseDurationSeconds"] == 15
    await sleep_until(7.0)
    # Renewed at 2, 4 and 6: renewTime moved, acquireTime did not.
    spec = lease_spec(store)
    assert spec["acquireTime"] == format_micro_time(datetime(2025, 1, 1, tzinfo=UTC))
    assert spec["renewTime"] == "2025-01-01T00:00:06.000000Z"
    await a.elector.stop()
    await a.task  # type: ignore[misc]
    assert not a.elector.is_leader
    assert a.times("lost_leadership") == [7.0]
    assert "holderIdentity" not in lease_spec(store)


async def test_follower_takes_over_exactly_at_expiry_after_leader_is_killed() -> None:
    store = MemKube()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()  # b polls at 1, 3, 5, ...: it sees each of a's renewals one second late
    await sleep_until(10.5)
    assert b.elector.observed_leader == "a"
    await a.kill()  # last renewal at 10; b observed it at 11
    await sleep_until(40.0)
    assert b.times("became_leader") == [26.0]  # 11 + leaseDuration, not one retry later
    # Within leaseDuration after a missed its next renewal (due at 12), never before expiry.
    assert 26.0 - 12.0 <= 15.0
    assert lease_spec(store)["leaseTransitions"] == 1
    assert lease_spec(store)["holderIdentity"] == "b"
    assert_single_leader([a, b], end=40.0)
    await stop_all([b])


async def test_partitioned_leader_steps_down_before_follower_takes_over() -> None:
    store = MemKube()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    a.client.partitioned = True  # a keeps running but cannot reach the API; last renewal at 10
    await sleep_until(40.0)
    assert a.times("lost_leadership") == [20.0]  # 10 + renewDeadline
    assert a.log[-1].reason == "renew deadline exceeded"
    assert b.times("became_leader") == [26.0]
    intervals = assert_single_leader([a, b], end=40.0)
    assert [name for _, _, name in intervals] == ["a", "b"]
    # a re-campaigns: healed, it stays a follower while b renews; b releases and a leads again.
    a.client.partitioned = False
    await sleep_until(51.0)
    assert not a.elector.is_leader
    assert a.elector.observed_leader == "b"
    await b.elector.stop()
    await sleep_until(60.0)
    assert a.times("became_leader") == [0.0, 52.0]  # a polls on its own 2 s grid after healing
    assert lease_spec(store)["leaseTransitions"] == 2
    assert_single_leader([a, b], end=60.0)
    await stop_all([a, b])


async def test_graceful_release_lets_the_follower_take_over_at_its_next_attempt() -> None:
    store = MemKube()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    await a.elector.stop()
    assert lease_spec(store).get("holderIdentity") is None
    await sleep_until(20.0)
    assert b.times("became_leader") == [11.0]  # no wait for expiry: next retry
    assert b.elector.config.retry_period >= 11.0 - 10.5
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b], end=20.0)
    await stop_all([a, b])


async def test_simultaneous_candidates_race_on_create_and_one_wins() -> None:
    store = MemKube()
    cands = [make(store, name) for name in ("a", "b", "c")]
    for c in cands:
        c.start()
    await sleep_until(5.0)
    leaders = [c.name for c in cands if c.elector.is_leader]
    assert len(leaders) == 1
    assert store.log.conflicts >= 1  # the losers' creates got 409 AlreadyExists
    for c in cands:
        assert c.elector.observed_leader == leaders[0]
    assert_single_leader(cands, end=5.0)
    await stop_all(cands)


async def test_followers_race_on_takeover_and_409_loser_stays_follower() -> None:
    store = MemKube()
    a, b, c = make(store, "a"), make(store, "b"), make(store, "c")
    a.start()
    await sleep_until(1.0)
    b.start()
    c.start()  # same poll grid as b: both will try to replace the same resourceVersion
    await sleep_until(10.5)
    conflicts_before = store.log.conflicts
    await a.kill()
    await sleep_until(40.0)
    new_leaders = [x for x in (b, c) if x.elector.is_leader]
    assert len(new_leaders) == 1
    assert new_leaders[0].times("became_leader") == [26.0]
    assert store.log.conflicts == conflicts_before + 1
    loser = c if new_leaders[0] is b else b
    assert loser.elector.observed_leader == new_leaders[0].name
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b, c], end=40.0)
    await stop_all([b, c])


async def test_leader_steps_down_at_once_when_another_holder_overwrites_the_lease() -> None:
    store = MemKube()
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    lease = store.objects[(str(LEASES), NS, LEASE)]
    lease["spec"]["holderIdentity"] = "intruder"
    store.rv += 1
    lease["metadata"]["resourceVersion"] = str(store.rv)
    await sleep_until(5.0)
    assert a.times("lost_leadership") == [4.0]
    assert a.log[-1].reason == "lease taken by another holder"
    assert a.elector.observed_leader == "intruder"
    await stop_all([a])


async def test_transitions_iterator_reports_in_order_and_ends_on_stop() -> None:
    store = MemKube()
    a, b = make(store, "a"), make(store, "b")
    seen: list[tuple[str, str | None, float]] = []

    async def consume() -> None:
        async for t in b.elector.transitions():
            seen.append((t.kind, t.holder, t.at))

    consumer = asyncio.create_task(consume())
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(4.0)
    await a.elector.stop()
    await sleep_until(8.0)
    await b.elector.stop()
    await consumer
    assert seen == [
        ("new_leader", "a", 1.0),
        ("new_leader", None, 5.0),
        ("new_leader", "b", 5.0),
        ("became_leader", "b", 5.0),
        ("lost_leadership", "b", 8.0),
        ("new_leader", None, 8.0),
    ]


def test_config_rejects_unsafe_timings() -> None:
    with pytest.raises(ValueError, match="lease_duration"):
        ElectionConfig(LEASE, NS, "a", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match="retry_period"):
        ElectionConfig(LEASE, NS, "a", renew_deadline=2, retry_period=2)
    with pytest.raises(ValueError, match="identity"):
        ElectionConfig(LEASE, NS, "")


# -- with the Lease watched (watch_lease=True and an API that can watch) -------------------------


async def test_watching_follower_takes_over_at_the_instant_of_a_graceful_release() -> None:
    store = MemKube(watchable=True)
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    await a.elector.stop()
    await sleep_until(20.0)
    assert b.times("became_leader") == [10.5]
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b], end=20.0)
    await stop_all([b])


async def test_watching_follower_takes_over_exactly_one_lease_duration_after_the_last_renewal() -> None:
    store = MemKube(watchable=True)
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    await a.kill()  # last renewal at 10, seen by b's watch at 10
    await sleep_until(40.0)
    assert b.times("became_leader") == [25.0]
    assert_single_leader([a, b], end=40.0)
    await stop_all([b])


async def test_watching_partitioned_leader_still_steps_down_before_takeover() -> None:
    store = MemKube(watchable=True)
    a, b, c = make(store, "a"), make(store, "b"), make(store, "c")
    for x in (a, b, c):
        x.start()
    await sleep_until(10.5)
    leader = next(x for x in (a, b, c) if x.elector.is_leader)
    leader.client.partitioned = True
    await sleep_until(40.0)
    assert leader.times("lost_leadership") == [20.0]
    successors = [x for x in (a, b, c) if x is not leader and x.times("became_leader")]
    assert len(successors) == 1
    assert successors[0].times("became_leader") == [25.0]
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b, c], end=40.0)
    await stop_all([a, b, c])


async def test_watching_leader_steps_down_when_the_lease_is_overwritten() -> None:
    store = MemKube(watchable=True)
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    key = (str(LEASES), NS, LEASE)
    store.touch(key, {**store.objects[key]["spec"], "holderIdentity": "intruder"})
    await sleep_until(5.0)
    assert a.times("lost_leadership") == [3.0]
    assert a.elector.observed_leader == "intruder"
    await stop_all([a])
