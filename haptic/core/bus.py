"""The event bus: in-process publish/subscribe with bounded per-subscriber queues.

Semantics (each one is covered by a unit test):

- ``publish`` never blocks or awaits. It seals the event's envelope (id, timestamp, correlation and
  causation ids) and appends it to the queue of every matching subscriber, in subscription order.
  A subscriber receives events in publish order.
- Before ``start()``, and after ``pause()``, published events are buffered (bounded; overflow is
  dropped and counted) and released in order on the next ``start()``.
- A full subscriber queue drops the event for that subscriber only and counts the drop. Drops for
  critical subscribers also go to the ``on_critical_drop`` callback; lossy subscribers (observability)
  only count.
- Typed subscriptions receive only the event classes (or ``type`` names) they ask for.
- ``request`` scatters a ``Request`` and gathers ``Response`` events by request id from the expected
  responders, until all (or ``min_responses``) answered or the timeout passed.
- The bus keeps no event once every subscriber has taken it: events carry whole rendered configs (4 MB at
  10,000 Ingresses), so a history of them would keep dozens alive; ``/debug/events`` keeps its own ring of
  their JSON forms (``haptic.controller.observe.event_ring``).

Example::

    bus = EventBus(RealClock(), UuidIds())
    sub = bus.subscribe("printer", types=(Pinged,))
    bus.publish(Pinged(target="a"))   # buffered: the bus is not started yet
    bus.start()                       # released to "printer"
    event = await sub.get()
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from haptic.core.clock import Clock
from haptic.core.errors import SubscriptionClosed as SubscriptionClosed
from haptic.core.event import Event, Request, Response, event_types
from haptic.core.ids import IdSource

_log = logging.getLogger(__name__)

#: Selects events for a typed subscription: an ``Event`` subclass (subclasses match too) or a type name.
EventSelector = type[Event] | str
DropCallback = Callable[[str, Event], None]
_E = TypeVar("_E", bound=Event)

DEFAULT_CAPACITY: Final = 100
DEFAULT_PRESTART_CAPACITY: Final = 1000
DEFAULT_REQUEST_TIMEOUT: Final = 10.0


class Subscription:
    """One subscriber's bounded queue. Consume with ``await get()`` or ``async for event in sub``."""

    __slots__ = ("_bus", "_closed", "_queue", "_waiter", "active", "capacity", "critical", "delivered", "dropped",
                 "name", "types")

    def __init__(self, bus: EventBus, name: str, types: tuple[EventSelector, ...] | None, capacity: int,
                 critical: bool, active: bool) -> None:
        self._bus = bus
        self.name = name
        self.types = types
        self.capacity = capacity
        self.critical = critical
        self.active = active
        self.delivered = 0
        self.dropped = 0
        self._queue: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    async def get(self) -> Event:
        """The next event; waits for one. Raises ``SubscriptionClosed`` once closed and empty."""
        queue = self._queue
        while not queue:
            if self._closed:
                raise SubscriptionClosed(self.name)
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return queue.popleft()

    def get_nowait(self) -> Event | None:
        return self._queue.popleft() if self._queue else None

    def drain(self) -> list[Event]:
        """Take every queued event at once (for "latest wins" coalescing)."""
        events = list(self._queue)
        self._queue.clear()
        return events

    def take_latest(self, cls: type[_E], current: _E) -> tuple[_E, int]:
        """Latest wins: remove the queued ``cls`` events and return the newest (else ``current``) with the
        number superseded. Events of other classes stay queued, in order."""
        latest, superseded, keep = current, 0, deque[Event]()
        for event in self._queue:
            if isinstance(event, cls):
                latest, superseded = event, superseded + 1
            else:
                keep.append(event)
        if superseded:
            self._queue.clear()
            self._queue.extend(keep)
        return latest, superseded

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def closed(self) -> bool:
        return self._closed

    def activate(self) -> None:
        """Start receiving events (a leader-only subscriber gaining leadership)."""
        if not self.active and not self._closed:
            self.active = True
            self._bus._invalidate_routes()

    def deactivate(self) -> int:
        """Stop receiving events and discard the queued ones; returns how many were discarded."""
        discarded = len(self._queue)
        self._queue.clear()
        if self.active:
            self.active = False
            self._bus._invalidate_routes()
        return discarded

    def close(self) -> None:
        """Unsubscribe. A waiting ``get`` returns the remaining events, then raises ``SubscriptionClosed``."""
        self._bus.unsubscribe(self)

    def matches(self, cls: type[Event]) -> bool:
        if self.types is None:
            return True
        return any(issubclass(cls, t) if isinstance(t, type) else cls.type == t for t in self.types)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        try:
            return await self.get()
        except SubscriptionClosed:
            raise StopAsyncIteration from None

    def __repr__(self) -> str:
        return f"<Subscription {self.name} queued={len(self._queue)} dropped={self.dropped}>"


@dataclass(frozen=True, slots=True)
class SubscriberStats:
    name: str
    types: tuple[str, ...]
    capacity: int
    critical: bool
    active: bool
    queued: int
    delivered: int
    dropped: int


@dataclass(frozen=True, slots=True)
class RequestResult:
    """What a scatter-gather request got: who answered (in arrival order) and who did not."""

    request_id: str
    expected: tuple[str, ...]
    responses: tuple[Response, ...]
    missing: tuple[str, ...]
    timed_out: bool

    @property
    def responders(self) -> tuple[str, ...]:
        return tuple(r.responder for r in self.responses)

    @property
    def complete(self) -> bool:
        """Every expected responder answered."""
        return not self.missing


class _Pending:
    __slots__ = ("expected", "future", "needed", "responses")

    def __init__(self, expected: tuple[str, ...], needed: int, future: asyncio.Future[None]) -> None:
        self.expected = frozenset(expected)
        self.needed = needed
        self.future = future
        self.responses: dict[str, Response] = {}


class EventBus:
    """Publish/subscribe hub of one controller iteration. See the module docstring for semantics."""

    def __init__(self, clock: Clock, ids: IdSource, *, prestart_capacity: int = DEFAULT_PRESTART_CAPACITY,
                 default_capacity: int = DEFAULT_CAPACITY,
                 on_critical_drop: DropCallback | None = None) -> None:
        self.clock = clock
        self.ids = ids
        self.default_capacity = default_capacity
        self.on_critical_drop = on_critical_drop
        self.published = 0
        self.dropped_before_start = 0
        self.dropped_critical = 0
        self.dropped_lossy = 0
        self._started = False
        self._subs: list[Subscription] = []
        self._routes: dict[type[Event], tuple[Subscription, ...]] = {}
        self._prestart: deque[Event] = deque()
        self._prestart_capacity = prestart_capacity
        self._pending: dict[str, _Pending] = {}

    # -- subscriptions -------------------------------------------------------------------------

    def subscribe(self, name: str, *, types: Sequence[EventSelector] | None = None, capacity: int | None = None,
                  critical: bool = True, active: bool = True, warn_if_late: bool = True) -> Subscription:
        """Add a subscriber. ``types=None`` receives every event; ``critical=False`` makes it lossy.

        Type names in ``types`` must name a defined event class (a typo raises ``ValueError``).

        Subscribing after ``start()`` may miss events already released; that is logged unless
        ``warn_if_late=False`` (subscribers that know they start late, e.g. on leadership).
        """
        known = event_types()
        for selector in types or ():
            if isinstance(selector, str) and selector not in known:
                close = difflib.get_close_matches(selector, list(known), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"subscriber {name!r}: unknown event type {selector!r}{hint}")
        if self._started and warn_if_late:
            _log.warning("subscriber %s subscribed after the bus started and may have missed events", name)
        sub = Subscription(self, name, tuple(types) if types is not None else None,
                           capacity if capacity is not None else self.default_capacity, critical, active)
        self._subs.append(sub)
        self._invalidate_routes()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
            self._invalidate_routes()
        sub._closed = True
        sub._wake()

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, event: Event, *, cause: Event | None = None) -> int:
        """Publish without blocking; returns to how many subscribers it was queued (0 while buffering).

        An event without an id gets one now, with a timestamp; with ``cause`` it joins the cause's
        correlation and names the cause as its causation, otherwise it starts a new correlation
        (unless it already carries a ``correlation_id``). An already published event keeps its envelope.
        """
        if not event.event_id:
            self._seal(event, cause)
        self.published += 1
        if not self._started:
            if len(self._prestart) >= self._prestart_capacity:
                self.dropped_before_start += 1
                if self.dropped_before_start == 1 or self.dropped_before_start % 1000 == 0:
                    _log.warning("pre-start buffer full (%d): dropped %d events so far, last %s",
                                 self._prestart_capacity, self.dropped_before_start, event.type)
                return 0
            self._prestart.append(event)
            return 0
        return self._dispatch(event)

    def _seal(self, event: Event, cause: Event | None) -> None:
        # Events are frozen for their consumers; the bus fills the envelope once, before anyone sees it.
        event_id = self.ids.new_id()
        seal = object.__setattr__
        seal(event, "event_id", event_id)
        seal(event, "timestamp", self.clock.wall())
        if cause is not None:
            seal(event, "correlation_id", cause.correlation_id or cause.event_id)
            seal(event, "causation_id", cause.event_id)
        elif not event.correlation_id:
            seal(event, "correlation_id", event_id)

    def _dispatch(self, event: Event) -> int:
        cls = type(event)
        subs = self._routes.get(cls)
        if subs is None:
            subs = self._routes[cls] = tuple(s for s in self._subs if s.active and s.matches(cls))
        queued = 0
        for sub in subs:
            queue = sub._queue
            if len(queue) >= sub.capacity:
                self._drop(sub, event)
                continue
            queue.append(event)
            sub.delivered += 1
            queued += 1
            waiter = sub._waiter
            if waiter is not None:
                sub._waiter = None
                if not waiter.done():
                    waiter.set_result(None)
        if self._pending and isinstance(event, Response):
            self._collect(event)
        return queued

    def _drop(self, sub: Subscription, event: Event) -> None:
        sub.dropped += 1
        if not sub.critical:
            self.dropped_lossy += 1
            return
        self.dropped_critical += 1
        if self.on_critical_drop is not None:
            self.on_critical_drop(sub.name, event)
        else:
            _log.warning("subscriber %s is full (%d): dropped %s %s", sub.name, sub.capacity, event.type,
                         event.event_id)

    def _invalidate_routes(self) -> None:
        self._routes.clear()

    # -- start / pause -------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._started

    def start(self) -> None:
        """Release the buffered events in publish order, then deliver directly. Idempotent."""
        prestart = self._prestart
        while prestart:
            # Events published while releasing (by a drop callback) queue behind: order is kept.
            self._dispatch(prestart.popleft())
        self._started = True

    def pause(self) -> None:
        """Go back to buffering until the next ``start()`` (used around leadership changes)."""
        self._started = False

    # -- scatter-gather ------------------------------------------------------------------------

    # The timeout is part of the gathering contract (a partial result comes back), not a cancel scope.
    async def request(
        self, request: Request, *, expected: Sequence[str], min_responses: int | None = None,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,  # noqa: ASYNC109
        cause: Event | None = None,
    ) -> RequestResult:
        """Publish ``request`` and gather the ``Response`` events naming it.

        Returns once ``min_responses`` (default: all) of the ``expected`` responders answered, or when
        ``timeout`` seconds of clock time passed (``timed_out=True``). A responder counts once; answers
        from responders not expected are ignored.
        """
        names = tuple(dict.fromkeys(expected))
        if not names:
            raise ValueError("a request needs at least one expected responder")
        needed = len(names) if min_responses is None else min_responses
        if not 1 <= needed <= len(names):
            raise ValueError(f"min_responses must be between 1 and {len(names)}, got {min_responses}")
        if not request.event_id:
            self._seal(request, cause)
        pending = _Pending(names, needed, asyncio.get_running_loop().create_future())
        self._pending[request.event_id] = pending
        timed_out = False
        try:
            self.publish(request)
            try:
                async with asyncio.timeout(timeout):
                    await pending.future
            except TimeoutError:
                timed_out = True
        finally:
            del self._pending[request.event_id]
        responses = tuple(pending.responses.values())
        return RequestResult(request_id=request.event_id, expected=names, responses=responses,
                             missing=tuple(n for n in names if n not in pending.responses), timed_out=timed_out)

    def _collect(self, response: Response) -> None:
        pending = self._pending.get(response.request_id)
        if pending is None or response.responder not in pending.expected or response.responder in pending.responses:
            return
        pending.responses[response.responder] = response
        if len(pending.responses) >= pending.needed and not pending.future.done():
            pending.future.set_result(None)

    # -- introspection -------------------------------------------------------------------------

    def stats(self) -> list[SubscriberStats]:
        """Per-subscriber counters, in subscription order."""
        return [
            SubscriberStats(
                name=s.name,
                types=tuple(t if isinstance(t, str) else t.type for t in s.types) if s.types is not None else ("*",),
                capacity=s.capacity, critical=s.critical, active=s.active, queued=len(s._queue),
                delivered=s.delivered, dropped=s.dropped,
            )
            for s in self._subs
        ]

    @property
    def buffered(self) -> int:
        """Events waiting for ``start()``."""
        return len(self._prestart)
