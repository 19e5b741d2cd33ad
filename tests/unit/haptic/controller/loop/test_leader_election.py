"""The leader election component drives leader-only components and publishes leader.* events."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from haptic.controller.events import BecameLeader, LeaderElectionStarted, LeaderObserved, LostLeadership
from haptic.controller.loop.leader_election import LeaderElection
from haptic.core import ALL_EVENTS, Component, Event, EventBus, LifecycleRegistry, SequentialIds, Status, VirtualClock
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector
from simulator.kube import FakeKubeAPI, InProcessKubeClient
from tests.support.candidate_client import CandidateClient

pytestmark = pytest.mark.looptime


class Deployer(Component):
    """Stands for the leader-only components: records what it received while running."""

    name = "deployer"
    subscribes: ClassVar = (BecameLeader,)
    leader_only = True

    def __init__(self, bus: EventBus) -> None:
        super().__init__(bus)
        self.seen: list[str] = []

    async def handle(self, event: Event) -> None:
        self.seen.append(event.type)


class Recorder(Component):
    name = "recorder"
    subscribes: ClassVar = (ALL_EVENTS,)

    def __init__(self, bus: EventBus) -> None:
        super().__init__(bus)
        self.events: list[Event] = []

    async def handle(self, event: Event) -> None:
        if event.type.startswith("leader."):
            self.events.append(event)


class Replica:
    def __init__(self, api: FakeKubeAPI | None, name: str) -> None:
        clock = VirtualClock()
        self.bus = EventBus(clock, SequentialIds(f"{name}-"))
        self.registry = LifecycleRegistry()
        self.client = CandidateClient(InProcessKubeClient(api), name) if api is not None else None
        elector = (
            LeaderElector(self.client, ElectionConfig("haptic-leader", "default", name), clock)
            if self.client is not None
            else None
        )
        self.election = LeaderElection(self.bus, self.registry, elector, identity=name)
        self.deployer = Deployer(self.bus)
        self.recorder = Recorder(self.bus)
        self.registry.register(self.recorder)
        self.registry.register(self.election)
        self.registry.register(self.deployer)

    async def start(self) -> None:
        await self.registry.start()
        self.bus.start()

    def deployer_status(self) -> Status:
        return self.registry.health().components["deployer"].status


async def settle(until: float) -> None:
    await asyncio.sleep(until - asyncio.get_running_loop().time())


async def test_leadership_starts_and_stops_leader_only_components() -> None:
    api = FakeKubeAPI(now=VirtualClock().now)
    a, b = Replica(api, "a"), Replica(api, "b")
    await a.start()
    await settle(1.0)
    await b.start()
    await settle(5.0)
    assert a.deployer_status() == Status.RUNNING
    assert b.deployer_status() == Status.STANDBY
    assert a.deployer.seen == ["leader.became"]  # the announcement reached the fresh component
    await a.registry.stop()  # graceful: releases the Lease
    await settle(6.0)
    assert b.deployer_status() == Status.RUNNING
    assert b.deployer.seen == ["leader.became"]
    kinds = [(type(e).__name__, getattr(e, "reason", getattr(e, "leader_identity", ""))) for e in a.recorder.events]
    assert kinds == [
        ("LeaderElectionStarted", ""),
        ("LeaderObserved", "a"),
        ("BecameLeader", "lease_acquired"),
        ("LostLeadership", "stopped"),
    ]
    b_events = b.recorder.events
    assert isinstance(b_events[0], LeaderElectionStarted)
    observed = [e for e in b_events if isinstance(e, LeaderObserved)]
    assert [(e.leader_identity, e.is_self) for e in observed] == [("a", False), ("b", True)]
    assert isinstance(b_events[-1], BecameLeader)
    await b.registry.stop()


async def test_lost_lease_publishes_lost_leadership_and_stops_leader_only_components() -> None:
    api = FakeKubeAPI(now=VirtualClock().now)
    a = Replica(api, "a")
    await a.start()
    await settle(10.5)
    assert a.client is not None
    a.client.partitioned = True
    await settle(21.0)
    assert a.deployer_status() == Status.STANDBY
    lost = [e for e in a.recorder.events if isinstance(e, LostLeadership)]
    assert [(e.identity, e.reason) for e in lost] == [("a", "lease_lost")]
    a.client.partitioned = False
    await settle(30.0)
    assert a.deployer_status() == Status.RUNNING  # re-campaigned and won
    assert a.deployer.seen == ["leader.became", "leader.became"]
    await a.registry.stop()


async def test_without_an_elector_the_replica_is_a_standalone_leader() -> None:
    solo = Replica(None, "solo")
    await solo.start()
    await settle(1.0)
    assert solo.deployer_status() == Status.RUNNING
    became = [e for e in solo.recorder.events if isinstance(e, BecameLeader)]
    assert [(e.identity, e.reason) for e in became] == [("solo", "standalone")]
    await solo.registry.stop()


async def test_abandon_keeps_the_lease_and_release_frees_it() -> None:
    api = FakeKubeAPI(now=VirtualClock().now)
    a, b = Replica(api, "a"), Replica(api, "b")
    await a.start()
    await settle(1.0)
    await b.start()
    await a.election.abandon()  # a crash: nobody releases the Lease
    await settle(5.0)
    assert b.deployer_status() == Status.STANDBY
    await settle(40.0)  # the Lease expired: b took over
    assert b.deployer_status() == Status.RUNNING
    await b.election.release()
    assert b.deployer_status() == Status.STANDBY
    lost = [e for e in b.recorder.events if isinstance(e, LostLeadership)]
    assert [(e.identity, e.reason) for e in lost] == [("b", "stopped")]
    await a.registry.stop()
    await b.registry.stop()


async def test_standalone_release_gives_leadership_up() -> None:
    solo = Replica(None, "solo")
    await solo.start()
    await settle(1.0)
    await solo.election.release()
    assert solo.deployer_status() == Status.STANDBY
    lost = [e for e in solo.recorder.events if isinstance(e, LostLeadership)]
    assert [(e.identity, e.reason) for e in lost] == [("solo", "stopped")]
    await solo.registry.stop()
