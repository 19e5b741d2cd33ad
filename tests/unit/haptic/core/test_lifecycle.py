"""LifecycleRegistry: dependency order, leader-only start/stop, health aggregation."""

from __future__ import annotations

import asyncio

import pytest

from haptic.core import (
    Component,
    DependencyError,
    Event,
    EventBus,
    LifecycleRegistry,
    SequentialIds,
    StartError,
    Status,
    VirtualClock,
)

from ._events import Ping, Pong


class Tracked(Component):
    """A component whose name is given per instance, recording start/stop into a shared log."""

    subscribes = (Ping,)

    def __init__(self, bus: EventBus, name: str, log: list[str], *, leader_only: bool = False,
                 fail_start: bool = False, work: float = 0.0) -> None:
        super().__init__(bus, name=name, leader_only=leader_only)
        self.events_log = log
        self.fail_start = fail_start
        self.work = work

    async def on_start(self) -> None:
        if self.fail_start:
            raise RuntimeError(f"{self.name} cannot start")
        self.events_log.append(f"start {self.name}")

    async def on_stop(self) -> None:
        self.events_log.append(f"stop {self.name}")

    async def handle(self, event: Event) -> None:
        await asyncio.sleep(self.work)


def make_bus() -> EventBus:
    return EventBus(VirtualClock(), SequentialIds("e"))


async def test_starts_in_dependency_order_and_stops_in_reverse() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    # Registered in the "wrong" order on purpose.
    registry.register(Tracked(bus, "reconciler", log), depends_on=("stores", "config"))
    registry.register(Tracked(bus, "stores", log), depends_on=("config",))
    registry.register(Tracked(bus, "config", log))
    registry.register(Tracked(bus, "metrics", log))
    assert registry.start_order() == ["config", "stores", "reconciler", "metrics"]
    await registry.start()
    assert log == ["start config", "start stores", "start reconciler", "start metrics"]
    assert set(registry.statuses().values()) == {Status.RUNNING}
    await registry.stop()
    assert log[4:] == ["stop metrics", "stop reconciler", "stop stores", "stop config"]
    assert set(registry.statuses().values()) == {Status.STOPPED}


async def test_rejects_unknown_dependencies_cycles_and_all_replica_on_leader_only() -> None:
    bus, log = make_bus(), []
    unknown = LifecycleRegistry()
    unknown.register(Tracked(bus, "a", log), depends_on=("ghost",))
    with pytest.raises(DependencyError, match="unknown component 'ghost'"):
        await unknown.start()

    cycle = LifecycleRegistry()
    cycle.register(Tracked(bus, "a", log), depends_on=("b",))
    cycle.register(Tracked(bus, "b", log), depends_on=("c",))
    cycle.register(Tracked(bus, "c", log), depends_on=("a",))
    with pytest.raises(DependencyError, match="cycle: a -> b -> c -> a"):
        cycle.start_order()

    inverted = LifecycleRegistry()
    inverted.register(Tracked(bus, "deployer", log, leader_only=True))
    inverted.register(Tracked(bus, "reconciler", log), depends_on=("deployer",))
    with pytest.raises(DependencyError, match="cannot depend on leader-only"):
        inverted.start_order()


    duplicate = LifecycleRegistry()
    duplicate.register(Tracked(bus, "a", log))
    with pytest.raises(ValueError, match="already registered"):
        duplicate.register(Tracked(bus, "a", log))


async def test_leader_only_components_start_with_leadership_and_stop_when_lost() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    registry.register(Tracked(bus, "watcher", log))
    scheduler = Tracked(bus, "scheduler", log, leader_only=True)
    registry.register(scheduler)
    registry.register(Tracked(bus, "deployer", log), depends_on=("scheduler", "watcher"), leader_only=True)
    await registry.start()
    assert log == ["start watcher"]
    assert registry.status("scheduler") == Status.STANDBY
    assert registry.health().healthy  # standby is healthy

    await registry.gain_leadership()
    assert registry.is_leader
    assert log[1:] == ["start scheduler", "start deployer"]
    assert registry.status("deployer") == Status.RUNNING

    await registry.lose_leadership()
    assert not registry.is_leader
    assert log[3:] == ["stop deployer", "stop scheduler"]
    assert registry.status("scheduler") == Status.STANDBY
    assert registry.status("watcher") == Status.RUNNING

    await registry.gain_leadership()  # a second term restarts them
    assert log[5:] == ["start scheduler", "start deployer"]
    await registry.stop()


async def test_gain_leadership_announces_into_a_paused_bus_so_new_leaders_see_it() -> None:
    seen: list[str] = []

    class Announced(Component):
        name = "announced"
        subscribes = (Ping, Pong)
        leader_only = True

        async def on_start(self) -> None:
            bus.publish(Ping(n=2))  # published while starting: must not be lost either

        async def handle(self, event: Event) -> None:
            seen.append(f"{event.type}:{event.n}")  # type: ignore[attr-defined]

    bus = make_bus()
    registry = LifecycleRegistry()
    registry.register(Announced(bus))
    bus.start()
    await registry.start()
    bus.publish(Ping(n=1))  # not leader yet: not for it
    await registry.gain_leadership(bus=bus, announce=Pong(n=0))
    assert bus.started  # resumed
    for _ in range(10):
        await asyncio.sleep(0)
    assert seen == ["test.pong:0", "test.ping:2"]
    await registry.stop()


async def test_gain_leadership_leaves_a_not_yet_started_bus_buffering() -> None:
    bus = make_bus()
    registry = LifecycleRegistry()
    await registry.gain_leadership(bus=bus, announce=Pong(n=0))
    assert not bus.started
    assert bus.buffered == 1


async def test_leadership_gained_before_start_takes_effect_on_start() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    registry.register(Tracked(bus, "scheduler", log, leader_only=True))
    registry.register(Tracked(bus, "watcher", log))
    await registry.gain_leadership()  # e.g. standalone mode

    await registry.start()
    assert log == ["start watcher", "start scheduler"]
    await registry.stop()


async def test_failed_start_is_reported_and_dependents_are_not_started() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    registry.register(Tracked(bus, "config", log, fail_start=True))
    registry.register(Tracked(bus, "reconciler", log), depends_on=("config",))
    with pytest.raises(StartError, match="config"):
        await registry.start()
    assert registry.status("config") == Status.FAILED
    assert registry.status("reconciler") == Status.PENDING
    report = registry.health()
    assert not report.healthy
    assert "cannot start" in report.components["config"].reason



@pytest.mark.looptime
async def test_stalled_component_makes_the_registry_unhealthy() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    stuck = Tracked(bus, "stuck", log, work=10_000.0)
    registry.register(stuck)
    registry.register(Tracked(bus, "fine", log, leader_only=True))
    bus.start()
    await registry.start()
    bus.publish(Ping(n=1))
    await asyncio.sleep(1)
    assert registry.health().healthy
    await asyncio.sleep(stuck.stall_timeout + 1)
    report = registry.health()
    assert not report.healthy
    assert not report.components["stuck"].healthy
    assert report.components["stuck"].reason.startswith("stalled")
    assert report.components["fine"].healthy
    assert report.to_dict()["status"] == "degraded"
    await registry.stop()


async def test_register_leader_only_gates_the_component_subscription() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    component = Tracked(bus, "made-leader-only-by-registry", log)
    assert component.subscription is not None and component.subscription.active
    registry.register(component, leader_only=True)
    assert component.leader_only
    assert not component.subscription.active  # standby: events are not queued for it
    bus.start()
    await registry.start()
    bus.publish(Ping(n=1))
    assert component.subscription.queued == 0
    await registry.gain_leadership()
    assert component.subscription.active
    await registry.stop()


async def test_crashed_component_is_unhealthy() -> None:
    bus, log = make_bus(), []
    registry = LifecycleRegistry()
    component = Tracked(bus, "victim", log)
    registry.register(component)
    await registry.start()
    assert registry.health().to_dict() == {
        "status": "ok", "components": {"victim": {"status": "running", "healthy": True, "reason": ""}},
    }
    assert component._task is not None
    component._task.cancel()  # the loop ended although the registry expects it running
    await component.done.wait()
    report = registry.health()
    assert not report.healthy
    assert report.components["victim"].reason == "stopped"
