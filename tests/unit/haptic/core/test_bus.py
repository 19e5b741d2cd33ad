"""EventBus: buffering, pause, per-subscriber drops, critical drop callback, typed filtering, ordering,
envelope ids and causation, scatter-gather and the ring buffer."""

from __future__ import annotations

import asyncio
import sys

import pytest

from haptic.core import Event, EventBus, SequentialIds, SubscriptionClosed, VirtualClock
from haptic.core.clock import DEFAULT_VIRTUAL_EPOCH

from ._events import Check, CheckAnswer, Login, LoudPing, Ping, Pong


def make_bus(**kwargs: object) -> EventBus:
    return EventBus(VirtualClock(), SequentialIds("e"), **kwargs)  # type: ignore[arg-type]


def numbers(events: list[Event]) -> list[int]:
    return [e.n for e in events if isinstance(e, Ping | Pong)]


async def test_events_published_before_start_are_buffered_and_released_in_order() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    for n in range(5):
        assert bus.publish(Ping(n=n)) == 0  # buffered: delivered to nobody yet
    assert sub.queued == 0
    assert bus.buffered == 5
    bus.start()
    assert bus.buffered == 0
    assert numbers(sub.drain()) == [0, 1, 2, 3, 4]
    assert bus.publish(Ping(n=5)) == 1  # started: delivered directly
    assert numbers(sub.drain()) == [5]


async def test_prestart_buffer_is_bounded_and_counts_overflow() -> None:
    bus = make_bus(prestart_capacity=3)
    sub = bus.subscribe("s")
    for n in range(5):
        bus.publish(Ping(n=n))
    assert bus.dropped_before_start == 2
    bus.start()
    assert numbers(sub.drain()) == [0, 1, 2]


async def test_start_is_idempotent() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.publish(Ping(n=1))
    bus.start()
    bus.start()
    assert numbers(sub.drain()) == [1]


async def test_pause_returns_to_buffering_until_next_start() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.start()
    bus.publish(Ping(n=1))
    bus.pause()
    assert not bus.started
    bus.publish(Ping(n=2))
    late = bus.subscribe("late", warn_if_late=False)  # e.g. leader-only components starting now
    assert numbers(sub.drain()) == [1]
    bus.start()
    assert numbers(sub.drain()) == [2]
    assert numbers(late.drain()) == [2]  # subscribed during the pause: gets the buffered event


async def test_full_queue_drops_per_subscriber_and_counts() -> None:
    bus = make_bus()
    small = bus.subscribe("small", capacity=2)
    big = bus.subscribe("big", capacity=10)
    bus.start()
    for n in range(5):
        bus.publish(Ping(n=n))
    assert numbers(small.drain()) == [0, 1]  # the newest are dropped, the queued ones kept
    assert numbers(big.drain()) == [0, 1, 2, 3, 4]
    stats = {s.name: s for s in bus.stats()}
    assert stats["small"].dropped == 3
    assert stats["small"].delivered == 2
    assert stats["big"].dropped == 0
    assert stats["big"].delivered == 5


async def test_critical_drops_go_to_callback_and_lossy_drops_only_count() -> None:
    reported: list[tuple[str, int]] = []
    bus = make_bus(on_critical_drop=lambda name, event: reported.append((name, numbers([event])[0])))
    bus.subscribe("critical", capacity=1)
    bus.subscribe("lossy", capacity=1, critical=False)
    bus.start()
    for n in range(3):
        bus.publish(Ping(n=n))
    assert reported == [("critical", 1), ("critical", 2)]
    assert bus.dropped_critical == 2
    assert bus.dropped_lossy == 2
    assert {s.name: s.dropped for s in bus.stats()} == {"critical": 2, "lossy": 2}


async def test_critical_drop_without_callback_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    bus = make_bus()
    bus.subscribe("critical", capacity=1)
    bus.start()
    bus.publish(Ping(n=0))
    with caplog.at_level("WARNING", logger="haptic.core.bus"):
        bus.publish(Ping(n=1))
    assert "critical is full" in caplog.text


async def test_typed_subscription_filters_by_class_subclass_and_type_name() -> None:
    bus = make_bus()
    pings = bus.subscribe("pings", types=(Ping,))
    pongs = bus.subscribe("pongs", types=("test.pong",))
    loud = bus.subscribe("loud", types=(LoudPing,))
    everything = bus.subscribe("all")
    bus.start()
    bus.publish(Ping(n=1))
    bus.publish(Pong(n=2))
    bus.publish(LoudPing(n=3))
    assert [type(e) for e in pings.drain()] == [Ping, LoudPing]
    assert [type(e) for e in pongs.drain()] == [Pong]
    assert [type(e) for e in loud.drain()] == [LoudPing]
    assert [type(e) for e in everything.drain()] == [Ping, Pong, LoudPing]
    assert {s.name: s.types for s in bus.stats()}["pings"] == ("test.ping",)


def test_unknown_type_names_are_rejected_with_a_hint() -> None:
    bus = make_bus()
    with pytest.raises(ValueError, match=r"unknown event type 'test\.pnog' \(did you mean 'test\.pong'\?\)"):
        bus.subscribe("typo", types=("test.pnog",))
    assert bus.stats() == []


async def test_delivery_order_is_publish_order_and_subscribers_are_notified_in_subscription_order() -> None:
    bus = make_bus()
    order: list[tuple[str, int]] = []
    subs = [bus.subscribe(f"s{i}") for i in range(3)]
    bus.start()

    async def consume(i: int) -> None:
        for _ in range(3):
            event = await subs[i].get()
            order.append((f"s{i}", numbers([event])[0]))

    tasks = [asyncio.create_task(consume(i)) for i in (2, 0, 1)]  # consumers created out of order
    await asyncio.sleep(0)
    for n in range(3):
        bus.publish(Ping(n=n))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    for i in range(3):
        assert [n for name, n in order if name == f"s{i}"] == [0, 1, 2]
    # Each event wakes the subscribers in subscription order.
    assert order[:3] == [("s0", 0), ("s1", 0), ("s2", 0)]


async def test_get_waits_for_the_next_event() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.start()
    getter = asyncio.create_task(sub.get())
    await asyncio.sleep(0)
    assert not getter.done()
    bus.publish(Ping(n=7))
    assert numbers([await getter]) == [7]


async def test_take_latest_coalesces_one_class_and_keeps_the_others_in_order() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.start()
    for event in (Ping(n=1), Pong(n=2), Ping(n=3), Pong(n=4), Ping(n=5)):
        bus.publish(event)
    first = await sub.get()
    assert isinstance(first, Ping)
    latest, superseded = sub.take_latest(Ping, first)
    assert (latest.n, superseded) == (5, 2)
    assert numbers(sub.drain()) == [2, 4]
    bus.publish(Pong(n=6))
    same, none = sub.take_latest(Ping, latest)
    assert (same, none) == (latest, 0)
    assert sub.queued == 1


async def test_unsubscribe_stops_delivery_and_ends_iteration_after_the_queue() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.start()
    bus.publish(Ping(n=1))
    sub.close()
    bus.publish(Ping(n=2))
    assert sub.closed
    got = [e async for e in sub]
    assert numbers(got) == [1]
    with pytest.raises(SubscriptionClosed):
        await sub.get()
    assert bus.stats() == []


async def test_waiting_get_is_released_when_closed() -> None:
    bus = make_bus()
    sub = bus.subscribe("s")
    bus.start()
    getter = asyncio.create_task(sub.get())
    await asyncio.sleep(0)
    bus.unsubscribe(sub)
    with pytest.raises(SubscriptionClosed):
        await getter


async def test_inactive_subscription_receives_nothing_until_activated() -> None:
    bus = make_bus()
    sub = bus.subscribe("leader-only", active=False)
    bus.start()
    bus.publish(Ping(n=1))
    assert sub.queued == 0
    sub.activate()
    bus.publish(Ping(n=2))
    bus.publish(Ping(n=3))
    assert sub.deactivate() == 2  # queued events are discarded on deactivation
    bus.publish(Ping(n=4))
    assert sub.queued == 0
    assert sub.dropped == 0  # not receiving is not dropping


async def test_late_subscription_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    bus = make_bus()
    bus.start()
    with caplog.at_level("WARNING", logger="haptic.core.bus"):
        bus.subscribe("late")
        bus.subscribe("knows-it-is-late", warn_if_late=False)
    assert "late subscribed after the bus started" in caplog.text
    assert "knows-it-is-late" not in caplog.text


@pytest.mark.looptime
async def test_publish_seals_ids_timestamp_and_new_correlation() -> None:
    bus = make_bus()
    bus.start()
    await bus.clock.sleep(12)
    first = Ping(n=1)
    second = Ping(n=2)
    bus.publish(first)
    bus.publish(second)
    assert (first.event_id, first.correlation_id, first.causation_id) == ("e1", "e1", "")
    assert (second.event_id, second.correlation_id, second.causation_id) == ("e2", "e2", "")
    assert first.timestamp == DEFAULT_VIRTUAL_EPOCH + bus.clock.monotonic()


async def test_cause_propagates_correlation_and_causation() -> None:
    bus = make_bus()
    bus.start()
    root = Ping(n=1)
    bus.publish(root)
    child = Pong(n=2)
    bus.publish(child, cause=root)
    grandchild = Ping(n=3)
    bus.publish(grandchild, cause=child)
    assert child.correlation_id == root.event_id
    assert child.causation_id == root.event_id
    assert grandchild.correlation_id == root.event_id
    assert grandchild.causation_id == child.event_id


async def test_explicit_correlation_is_kept_and_republishing_keeps_the_envelope() -> None:
    bus = make_bus()
    bus.start()
    event = Ping(n=1, correlation_id="given")
    bus.publish(event)
    assert event.correlation_id == "given"
    assert event.event_id == "e1"
    bus.publish(event)
    assert event.event_id == "e1"


async def test_events_are_frozen_for_consumers() -> None:
    event = Ping(n=1)
    with pytest.raises(AttributeError):
        event.n = 2  # type: ignore[misc]


async def test_the_bus_keeps_no_event_its_subscribers_have_taken() -> None:
    # Events carry whole rendered configs: a bus that kept a history of them (it did: the last 1,000) kept
    # dozens of 4 MB configs alive at 10,000 Ingresses, and every render wrote to fresh memory.
    bus = make_bus()
    sub = bus.subscribe("s")
    text = "".join(["backend b\n"] * 1000)
    alone = sys.getrefcount(text)
    bus.publish(Login(user="u", config=text))  # buffered: not started
    bus.start()
    taken = await sub.get()
    assert isinstance(taken, Login) and taken.config is text
    del taken
    assert sys.getrefcount(text) == alone
    assert bus.published == 1


# -- scatter-gather ----------------------------------------------------------------------------


def responder(bus: EventBus, name: str, *, delay: float = 0.0, answers: int = 1) -> asyncio.Task[None]:
    sub = bus.subscribe(name, types=(Check,))

    async def run() -> None:
        request = await sub.get()
        if delay:
            await asyncio.sleep(delay)
        for _ in range(answers):
            bus.publish(CheckAnswer(request_id=request.event_id, responder=name), cause=request)

    return asyncio.create_task(run())


@pytest.mark.looptime
async def test_request_gathers_all_expected_responses() -> None:
    bus = make_bus()
    tasks = [responder(bus, "a", delay=1), responder(bus, "b", delay=2), responder(bus, "c", answers=2)]
    bus.start()
    start = bus.clock.monotonic()
    request = Check(what="x")
    result = await bus.request(request, expected=["a", "b", "c"], timeout=10)
    assert result.complete
    assert not result.timed_out
    assert result.request_id == request.event_id == request.request_id
    assert result.responders == ("c", "a", "b")  # arrival order, duplicates from "c" counted once
    assert result.missing == ()
    assert bus.clock.monotonic() - start == 2  # returned as soon as the last one answered
    assert all(r.causation_id == request.event_id for r in result.responses)
    await asyncio.gather(*tasks)


@pytest.mark.looptime
async def test_request_times_out_and_reports_missing_responders() -> None:
    bus = make_bus()
    tasks = [responder(bus, "a"), responder(bus, "slow", delay=30)]
    bus.start()
    start = bus.clock.monotonic()
    result = await bus.request(Check(), expected=["a", "slow", "absent"], timeout=5)
    assert result.timed_out
    assert not result.complete
    assert result.responders == ("a",)
    assert result.missing == ("slow", "absent")
    assert bus.clock.monotonic() - start == 5
    await asyncio.gather(*tasks)


@pytest.mark.looptime
async def test_request_returns_once_min_responses_arrived() -> None:
    bus = make_bus()
    tasks = [responder(bus, "a", delay=1), responder(bus, "b", delay=3), responder(bus, "c", delay=8)]
    bus.start()
    start = bus.clock.monotonic()
    result = await bus.request(Check(), expected=["a", "b", "c"], min_responses=2, timeout=10)
    assert not result.timed_out
    assert result.responders == ("a", "b")
    assert result.missing == ("c",)
    assert bus.clock.monotonic() - start == 3
    await asyncio.gather(*tasks)


@pytest.mark.looptime
async def test_request_ignores_unexpected_responders_and_other_requests() -> None:
    bus = make_bus()
    tasks = [responder(bus, "stranger"), responder(bus, "a", delay=1)]
    bus.start()
    result = await bus.request(Check(), expected=["a"], timeout=5)
    bus.publish(CheckAnswer(request_id="someone-else", responder="a"))
    assert result.responders == ("a",)
    assert not result.timed_out
    await asyncio.gather(*tasks)


async def test_request_validates_expected_and_min_responses() -> None:
    bus = make_bus()
    with pytest.raises(ValueError, match="at least one"):
        await bus.request(Check(), expected=[])
    with pytest.raises(ValueError, match="min_responses"):
        await bus.request(Check(), expected=["a"], min_responses=2)
