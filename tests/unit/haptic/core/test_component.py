"""Component: subscribes in its constructor, one event at a time, survives handler exceptions,
ready/done signals, clean cancellation, causation propagation, health of a stalled component."""

from __future__ import annotations

import asyncio

import pytest

from haptic.core import ALL_EVENTS, Component, Event, EventBus, SequentialIds, VirtualClock

from ._events import Ping, Pong


def make_bus() -> EventBus:
    return EventBus(VirtualClock(), SequentialIds("e"))


class Recorder(Component):
    name = "recorder"
    subscribes = (Ping,)

    def __init__(self, bus: EventBus, *, fail_on: int | None = None, work: float = 0.0) -> None:
        super().__init__(bus)
        self.seen: list[int] = []
        self.fail_on = fail_on
        self.work = work
        self.in_flight = 0
        self.max_in_flight = 0
        self.stopped_hook = False

    async def handle(self, event: Event) -> None:
        assert isinstance(event, Ping)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.work:
                await asyncio.sleep(self.work)
            if event.n == self.fail_on:
                raise ValueError(f"bad event {event.n}")
            self.seen.append(event.n)
        finally:
            self.in_flight -= 1

    async def on_stop(self) -> None:
        self.stopped_hook = True


async def wait_processed(component: Component, count: int) -> None:
    for _ in range(20_000):  # at most ~20 s of loop time, then fail rather than hang
        if component.processed >= count:
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"{component.name} processed {component.processed} events, expected {count}")


async def test_subscribes_in_constructor_so_buffered_events_are_not_lost() -> None:
    bus = make_bus()
    recorder = Recorder(bus)  # constructed before anything is published, started much later
    for n in range(3):
        bus.publish(Ping(n=n))
    bus.start()
    bus.publish(Ping(n=3))
    await recorder.start()
    await wait_processed(recorder, 4)
    assert recorder.seen == [0, 1, 2, 3]
    await recorder.stop()


@pytest.mark.looptime
async def test_handles_one_event_at_a_time_in_order() -> None:
    bus = make_bus()
    recorder = Recorder(bus, work=1.0)
    bus.start()
    await recorder.start()
    for n in range(5):
        bus.publish(Ping(n=n))
    await asyncio.sleep(4.5)
    assert recorder.processed == 4  # one second of work each, strictly one after the other
    await asyncio.sleep(1)
    assert recorder.seen == [0, 1, 2, 3, 4]
    assert recorder.max_in_flight == 1
    await recorder.stop()


async def test_survives_handler_exception_logs_and_counts_it(caplog: pytest.LogCaptureFixture) -> None:
    bus = make_bus()
    recorder = Recorder(bus, fail_on=1)
    bus.start()
    await recorder.start()
    with caplog.at_level("ERROR"):
        for n in range(3):
            bus.publish(Ping(n=n))
        await wait_processed(recorder, 3)
    assert recorder.seen == [0, 2]
    assert recorder.errors == 1
    assert "bad event 1" in recorder.last_error
    failure = next(r for r in caplog.records if r.name == "haptic.component.recorder")
    assert failure.getMessage() == "handler failed"
    assert failure.haptic_fields["event_type"] == "test.ping"
    assert failure.exc_info is not None
    assert recorder.running
    assert recorder.health().healthy
    await recorder.stop()


async def test_ready_and_done_signals() -> None:
    bus = make_bus()
    recorder = Recorder(bus)
    bus.start()
    assert not recorder.ready.is_set()
    await recorder.start()
    assert recorder.ready.is_set()
    assert not recorder.done.is_set()
    await recorder.stop()
    assert recorder.done.is_set()
    assert not recorder.ready.is_set()
    assert recorder.stopped_hook


async def test_ready_waits_for_on_start() -> None:
    order: list[str] = []

    class SlowStarter(Component):
        name = "slow-starter"
        subscribes = (Ping,)

        async def on_start(self) -> None:
            await asyncio.sleep(0.01)
            order.append("on_start done")

    bus = make_bus()
    component = SlowStarter(bus)
    await component.start()
    order.append("start returned")
    assert order == ["on_start done", "start returned"]
    await component.stop()


async def test_start_raises_what_on_start_raised() -> None:
    class Broken(Component):
        name = "broken"

        async def on_start(self) -> None:
            raise RuntimeError("cannot connect")

    component = Broken(make_bus())
    with pytest.raises(RuntimeError, match="cannot connect"):
        await component.start()
    assert not component.running
    assert component.done.is_set()
    assert not component.health().healthy


@pytest.mark.looptime
async def test_stops_cleanly_when_cancelled_mid_event() -> None:
    bus = make_bus()
    recorder = Recorder(bus, work=100.0)
    bus.start()
    await recorder.start()
    bus.publish(Ping(n=1))
    await asyncio.sleep(1)
    assert recorder.in_flight == 1
    await recorder.stop()  # cancels the handler; no exception escapes
    assert recorder.done.is_set()
    assert recorder.in_flight == 0
    assert recorder.errors == 0  # cancellation is not an error
    assert recorder.stopped_hook


async def test_run_can_be_cancelled_as_a_plain_task() -> None:
    bus = make_bus()
    recorder = Recorder(bus)
    bus.start()
    task = asyncio.create_task(recorder.run())
    await recorder.ready.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.done.is_set()
    assert recorder.stopped_hook


async def test_publish_from_handler_is_caused_by_the_handled_event() -> None:
    class Echo(Component):
        name = "echo"
        subscribes = (Ping,)

        async def handle(self, event: Event) -> None:
            assert isinstance(event, Ping)
            self.publish(Pong(n=event.n))
            self.publish(Pong(n=-1), new_correlation=True)

    bus = make_bus()
    echo = Echo(bus)
    pongs = bus.subscribe("pongs", types=(Pong,))
    bus.start()
    await echo.start()
    ping = Ping(n=5)
    bus.publish(ping)
    pong = await pongs.get()
    unrelated = await pongs.get()
    assert (pong.correlation_id, pong.causation_id) == (ping.correlation_id, ping.event_id)
    assert (unrelated.correlation_id, unrelated.causation_id) == (unrelated.event_id, "")
    await echo.stop()


async def test_all_events_and_no_events_subscriptions() -> None:
    class Everything(Component):
        name = "everything"
        subscribes = (ALL_EVENTS,)

    class Nothing(Component):
        name = "nothing"

    bus = make_bus()
    everything = Everything(bus)
    nothing = Nothing(bus)
    assert everything.subscription is not None
    assert everything.subscription.types is None
    assert nothing.subscription is None
    bus.start()
    await nothing.start()
    assert nothing.running  # lives until stopped even with nothing to consume
    bus.publish(Ping())
    bus.publish(Pong())
    assert everything.subscription.queued == 2
    await nothing.stop()
    assert nothing.done.is_set()


async def test_leader_only_component_receives_events_only_while_started() -> None:
    class LeaderOnly(Recorder):
        name = "leader-only-recorder"
        leader_only = True

    bus = make_bus()
    component = LeaderOnly(bus)
    bus.start()
    bus.publish(Ping(n=1))  # standby: not queued for it
    await component.start()
    bus.publish(Ping(n=2))
    await wait_processed(component, 1)
    await component.stop()
    bus.publish(Ping(n=3))  # standby again
    assert component.subscription is not None
    assert component.subscription.queued == 0
    await component.start()
    bus.publish(Ping(n=4))
    await wait_processed(component, 2)
    assert component.seen == [2, 4]
    await component.stop()


@pytest.mark.looptime
async def test_component_processing_one_event_too_long_is_unhealthy() -> None:
    bus = make_bus()
    recorder = Recorder(bus, work=1000.0)
    bus.start()
    await recorder.start()
    assert recorder.health().healthy
    bus.publish(Ping(n=1))
    await asyncio.sleep(recorder.stall_timeout - 1)
    assert recorder.health().healthy  # busy, not yet stalled
    await asyncio.sleep(2)
    health = recorder.health()
    assert not health.healthy
    assert "stalled: processing test.ping" in health.reason
    await recorder.stop()
    assert recorder.health() == type(health)(False, "stopped")


async def test_class_defaults_can_be_overridden_per_instance() -> None:
    class Watcher(Component):
        name = "watcher"
        subscribes = (Ping,)

    bus = make_bus()
    default = Watcher(bus)
    custom = Watcher(bus, name="watcher-ingresses", capacity=3, critical=False, leader_only=True)
    assert (default.name, custom.name) == ("watcher", "watcher-ingresses")
    assert (default.leader_only, custom.leader_only) == (False, True)
    stats = {s.name: s for s in bus.stats()}
    assert (stats["watcher"].capacity, stats["watcher"].critical) == (bus.default_capacity, True)
    assert (stats["watcher-ingresses"].capacity, stats["watcher-ingresses"].critical) == (3, False)
    assert not stats["watcher-ingresses"].active


async def test_spawned_background_tasks_are_cancelled_on_stop_and_failures_counted() -> None:
    cancelled: list[str] = []

    class WithBackground(Component):
        name = "with-background"

        async def on_start(self) -> None:
            self.spawn(self.forever(), "forever")
            self.spawn(self.fail(), "fail")

        async def forever(self) -> None:
            try:
                await asyncio.Future()
            except asyncio.CancelledError:
                cancelled.append("forever")
                raise

        async def fail(self) -> None:
            raise ValueError("background boom")

    component = WithBackground(make_bus())
    await component.start()
    await asyncio.sleep(0.001)
    assert component.errors == 1
    assert "background boom" in component.last_error
    await component.stop()
    assert cancelled == ["forever"]
