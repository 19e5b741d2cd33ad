"""Lease elector under virtual time (looptime) against the simulator's in-process fake API:
exact failover times, a single leader at every instant, 409 races, release and re-campaign."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from haptic.core import VirtualClock
from haptic.k8s.leaderelection import LEASES, ElectionConfig, LeaderElector, Transition, format_micro_time
from simulator.kube import FakeKubeAPI, InProcessKubeClient
from tests.support.candidate_client import CandidateClient, ConflictCounter

pytestmark = pytest.mark.looptime

NS = "default"
LEASE = "haptic-leader"


class Cluster:
    """The fake API plus what the tests look at: the Lease and the 409s the candidates met."""

    def __init__(self, watchable: bool = False) -> None:
        self.api = FakeKubeAPI(now=VirtualClock().now)
        self.watchable = watchable
        self.conflicts = ConflictCounter()

    def client(self, who: str) -> CandidateClient:
        return CandidateClient(InProcessKubeClient(self.api), who, self.conflicts)

    def lease(self) -> dict[str, Any]:
        lease: dict[str, Any] = self.api.get(self.api.resolve(LEASES.api_version, LEASES.plural), NS, LEASE)
        return lease


@dataclass
class Candidate:
    name: str
    client: CandidateClient
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


def make(cluster: Cluster, name: str) -> Candidate:
    client = cluster.client(name)
    config = ElectionConfig(LEASE, NS, name, watch_lease=cluster.watchable)
    elector = LeaderElector(client, config, VirtualClock())
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


def lease_spec(cluster: Cluster) -> dict[str, object]:
    return dict(cluster.lease()["spec"])


async def stop_all(candidates: list[Candidate]) -> None:
    for c in candidates:
        if c.task is not None and not c.task.done():
            await c.elector.stop()
            await c.task


async def intrude(cluster: Cluster) -> None:
    """Another client (not an elector) overwrites the holder."""
    body = {"spec": {"holderIdentity": "intruder"}}
    await InProcessKubeClient(cluster.api).patch(LEASES, LEASE, body, "merge", namespace=NS)


def lease_seconds(micro_time: str) -> float:
    """A Lease MicroTime as seconds of the test's loop clock (which starts at 2025-01-01T00:00:00Z)."""
    moment = datetime.strptime(micro_time, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return (moment - datetime(2025, 1, 1, tzinfo=UTC)).total_seconds()


async def sleep_until(moment: float) -> None:
    await asyncio.sleep(moment - asyncio.get_running_loop().time())


async def test_single_candidate_acquires_renews_and_releases() -> None:
    store = Cluster()
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
    store = Cluster()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()  # b polls at 1, 3, 5, ...: it sees each of a's renewals one second late
    await sleep_until(10.5)
    assert b.elector.observed_leader == "a"
    last_renewal = lease_seconds(lease_spec(store)["renewTime"])
    await a.kill()  # last renewal at 10; b observed it at 11
    await sleep_until(40.0)
    assert b.times("became_leader") == [26.0]  # 11 + leaseDuration, not one retry later
    # Never before the Lease expired, and within one retry of b seeing it expire.
    config = b.elector.config
    takeover = b.times("became_leader")[0]
    expiry = last_renewal + config.lease_duration
    assert expiry <= takeover <= expiry + config.retry_period
    assert lease_spec(store)["leaseTransitions"] == 1
    assert lease_spec(store)["holderIdentity"] == "b"
    assert_single_leader([a, b], end=40.0)
    await stop_all([b])


async def test_partitioned_leader_steps_down_before_follower_takes_over() -> None:
    store = Cluster()
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
    store = Cluster()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    released_at = asyncio.get_running_loop().time()
    await a.elector.stop()
    assert lease_spec(store).get("holderIdentity") is None
    await sleep_until(20.0)
    assert b.times("became_leader") == [11.0]  # no wait for expiry: next retry
    assert b.times("became_leader")[0] - released_at <= b.elector.config.retry_period
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b], end=20.0)
    await stop_all([a, b])


async def test_simultaneous_candidates_race_on_create_and_one_wins() -> None:
    store = Cluster()
    cands = [make(store, name) for name in ("a", "b", "c")]
    for c in cands:
        c.start()
    await sleep_until(5.0)
    leaders = [c.name for c in cands if c.elector.is_leader]
    assert len(leaders) == 1
    assert store.conflicts.count >= 1  # the losers' creates got 409 AlreadyExists
    for c in cands:
        assert c.elector.observed_leader == leaders[0]
    assert_single_leader(cands, end=5.0)
    await stop_all(cands)


async def test_followers_race_on_takeover_and_409_loser_stays_follower() -> None:
    store = Cluster()
    a, b, c = make(store, "a"), make(store, "b"), make(store, "c")
    a.start()
    await sleep_until(1.0)
    b.start()
    c.start()  # same poll grid as b: both will try to replace the same resourceVersion
    await sleep_until(10.5)
    conflicts_before = store.conflicts.count
    await a.kill()
    await sleep_until(40.0)
    new_leaders = [x for x in (b, c) if x.elector.is_leader]
    assert len(new_leaders) == 1
    assert new_leaders[0].times("became_leader") == [26.0]
    assert store.conflicts.count == conflicts_before + 1
    loser = c if new_leaders[0] is b else b
    assert loser.elector.observed_leader == new_leaders[0].name
    assert lease_spec(store)["leaseTransitions"] == 1
    assert_single_leader([a, b, c], end=40.0)
    await stop_all([b, c])


async def test_leader_steps_down_at_once_when_another_holder_overwrites_the_lease() -> None:
    store = Cluster()
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    await intrude(store)
    await sleep_until(5.0)
    assert a.times("lost_leadership") == [4.0]
    assert a.log[-1].reason == "lease taken by another holder"
    assert a.elector.observed_leader == "intruder"
    await stop_all([a])


async def test_transitions_iterator_reports_in_order_and_ends_on_stop() -> None:
    store = Cluster()
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
    store = Cluster(watchable=True)
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
    store = Cluster(watchable=True)
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
    store = Cluster(watchable=True)
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
    store = Cluster(watchable=True)
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    await intrude(store)
    await sleep_until(5.0)
    assert a.times("lost_leadership") == [3.0]
    assert a.elector.observed_leader == "intruder"
    await stop_all([a])


async def test_leader_rides_out_a_short_409_storm_and_yields_to_a_long_one() -> None:
    store = Cluster()
    a = make(store, "a")
    a.start()
    await sleep_until(1.0)
    store.api.faults.inject_conflicts("leases", 3)  # renewals at 2, 4, 6 fail; 8 succeeds
    await sleep_until(9.0)
    assert a.elector.is_leader
    assert store.conflicts.count == 3
    assert lease_spec(store)["renewTime"] == "2025-01-01T00:00:08.000000Z"
    store.api.faults.inject_conflicts("leases", 100)  # nothing succeeds after the renewal at 8
    await sleep_until(30.0)
    assert a.times("lost_leadership") == [18.0]
    store.api.faults.clear()
    await sleep_until(40.0)
    assert a.elector.is_leader  # re-campaigned: still the holder, so it takes the Lease back at once
    assert a.times("became_leader") == [0.0, 30.0]
    assert lease_spec(store)["leaseTransitions"] == 0  # same holder: no transition
    await stop_all([a])


async def test_api_outage_for_everyone_keeps_at_most_one_leader() -> None:
    store = Cluster(watchable=True)
    cands = [make(store, n) for n in ("a", "b", "c")]
    for c in cands:
        c.start()
    await sleep_until(10.5)
    first = next(c for c in cands if c.elector.is_leader)
    store.api.faults.outage(20.0)  # 10.5 .. 30.5: every request gets 503
    await sleep_until(60.0)
    assert first.times("lost_leadership") == [20.0]
    leaders = [c for c in cands if c.elector.is_leader]
    assert len(leaders) == 1
    assert_single_leader(cands, end=60.0)
    await stop_all(cands)


async def test_a_stopped_elector_can_run_again() -> None:
    store = Cluster()
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    await a.elector.stop()
    assert a.task is not None
    await a.task
    a.start()
    await sleep_until(6.0)
    assert a.times("became_leader") == [0.0, 3.0]
    assert lease_spec(store)["leaseTransitions"] == 1  # released, then re-acquired: the Lease changed hands
    await stop_all([a])


async def test_fence_refuses_writes_once_leadership_cannot_be_proven() -> None:
    store = Cluster()
    a = make(store, "a")
    a.start()
    await sleep_until(0.5)
    assert a.elector.refusal() == ""
    await sleep_until(10.5)
    a.client.partitioned = True  # last renewal started at 10
    await sleep_until(19.5)
    assert a.elector.refusal() == ""  # within the renew deadline the Lease is still provably ours
    await sleep_until(20.0)
    assert a.elector.refusal() != ""  # from the deadline on, whether or not it has stepped down yet
    await sleep_until(20.5)
    assert a.elector.refusal() == "not the leader"
    await stop_all([a])


async def test_fence_refuses_at_once_when_the_lease_is_seen_with_another_holder() -> None:
    store = Cluster(watchable=True)
    a = make(store, "a")
    a.start()
    await sleep_until(3.0)
    await intrude(store)
    await asyncio.sleep(0.001)  # the watch event: no renew tick is due before 4
    assert a.elector.refusal() != ""
    assert a.times("lost_leadership") == [3.0]
    await stop_all([a])


async def test_a_leader_handed_a_live_holders_lease_waits_out_its_write_window() -> None:
    store = Cluster()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()  # b sees a renew at 1, 3, 5, 7 (a renews at 0, 2, 4, 6)
    await sleep_until(7.5)
    body = {"spec": {"holderIdentity": "b"}}  # a foreign write hands the Lease to b while a runs
    await InProcessKubeClient(store.api).patch(LEASES, LEASE, body, "merge", namespace=NS)
    await sleep_until(9.5)
    assert b.elector.is_leader
    # b last saw a renew at 7: a may write until 7 + renewDeadline, plus a retry period in flight.
    assert b.elector.writes_allowed_from() == 7.0 + 10.0 + 2.0
    await stop_all([a, b])


async def test_a_leader_acquiring_an_expired_or_released_lease_writes_at_once() -> None:
    store = Cluster()
    a, b = make(store, "a"), make(store, "b")
    a.start()
    await sleep_until(1.0)
    b.start()
    await sleep_until(10.5)
    await a.kill()
    await sleep_until(30.0)
    assert b.elector.is_leader
    assert b.elector.writes_allowed_from() == b.times("became_leader")[0]
    await b.elector.stop()
    c = make(store, "c")
    c.start()
    await sleep_until(33.0)
    assert c.elector.is_leader and c.elector.writes_allowed_from() == c.times("became_leader")[0]
    await stop_all([c])
