"""The ``Component`` base: an event consumer with a lifecycle.

A component subscribes in its constructor (so it cannot miss an event buffered before the bus
starts), then ``start()`` runs its loop: one event at a time through ``handle``. An exception in
``handle`` is logged and counted and the loop goes on; cancellation (``stop()`` or cancelling the
task) ends it cleanly. ``ready`` is set once ``on_start`` finished and events flow; ``done`` once
the loop ended.

Example::

    class Greeter(Component):
        name = "greeter"
        subscribes = (Pinged,)          # or ("*",) for every event; () for none

        async def handle(self, event: Event) -> None:
            self.publish(Ponged(target=event.target))   # caused by the event being handled

    greeter = Greeter(bus)
    await greeter.start()   # returns once ready
    ...
    await greeter.stop()

A ``leader_only = True`` component keeps its subscription inactive (events are not queued for it)
until it is started, and discards its queue when stopped; the lifecycle registry starts it while
leadership is held.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from haptic.core.bus import EventBus, EventSelector, Subscription, SubscriptionClosed
from haptic.core.event import Event
from haptic.core.logging import get_logger
from haptic.core.tasks import cancel_and_wait

#: Put in ``subscribes`` to receive every event.
ALL_EVENTS: Final = "*"
#: A component processing one event longer than this is reported unhealthy (stalled).
DEFAULT_STALL_TIMEOUT: Final = 120.0


@dataclass(frozen=True, slots=True)
class Health:
    healthy: bool
    reason: str = ""


class Component:
    """Base class of the controller's components. Override ``handle`` (and maybe the hooks)."""

    #: Stable name, used for subscriptions, logs, health and dependencies (per instance: ``name=``).
    name: str = "component"
    #: Event classes or type names to receive; ``(ALL_EVENTS,)`` for all, ``()`` for none.
    subscribes: ClassVar[tuple[EventSelector, ...]] = ()
    #: Queue size of the subscription (``None``: the bus default).
    capacity: int | None = None
    #: Lossy components (observability) only count drops; critical drops are reported.
    critical: bool = True
    #: Runs only while this replica holds leadership (see ``LifecycleRegistry``; per instance: ``leader_only=``).
    leader_only: bool = False
    stall_timeout: ClassVar[float] = DEFAULT_STALL_TIMEOUT

    def __init__(self, bus: EventBus, *, name: str | None = None, leader_only: bool | None = None,
                 capacity: int | None = None, critical: bool | None = None) -> None:
        # Class attributes are the defaults; keyword arguments override them per instance.
        if name is not None:
            self.name = name
        if leader_only is not None:
            self.leader_only = leader_only
        if capacity is not None:
            self.capacity = capacity
        if critical is not None:
            self.critical = critical
        self.bus = bus
        self.clock = bus.clock
        #: Structured logger: ``self.log.info("msg", key=value)``.
        self.log = get_logger(f"haptic.component.{self.name}")
        self.processed = 0
        self.errors = 0
        self.last_error = ""
        self.ready = asyncio.Event()
        self.done = asyncio.Event()
        self.subscription: Subscription | None = None
        if self.subscribes:
            types = None if ALL_EVENTS in self.subscribes else self.subscribes
            self.subscription = bus.subscribe(self.name, types=types, capacity=self.capacity,
                                              critical=self.critical, active=not self.leader_only,
                                              warn_if_late=not self.leader_only)
        self._task: asyncio.Task[None] | None = None
        self._current: Event | None = None
        self._processing_since: float | None = None
        self._background: list[asyncio.Task[Any]] = []

    # -- hooks for subclasses ------------------------------------------------------------------

    async def handle(self, event: Event) -> None:
        """Process one event. Exceptions are logged and counted; the component keeps running."""

    async def on_start(self) -> None:
        """Runs before the first event is handled; an exception here fails ``start()``."""

    async def on_stop(self) -> None:
        """Runs after the loop ended (on cancellation, and after a failed ``on_start``): release, clear state."""

    # -- helpers for subclasses ----------------------------------------------------------------

    def publish(self, event: Event, *, cause: Event | None = None, new_correlation: bool = False) -> int:
        """Publish on the bus; by default caused by the event being handled (correlation propagates)."""
        if cause is None and not new_correlation:
            cause = self._current
        return self.bus.publish(event, cause=cause)

    @property
    def current_event(self) -> Event | None:
        return self._current

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str | None = None) -> asyncio.Task[Any]:
        """Run a background task owned by this component, cancelled when it stops."""
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}:{name or 'background'}")
        self._background.append(task)
        task.add_done_callback(self._background_done)
        return task

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        with contextlib.suppress(ValueError):
            self._background.remove(task)
        if not task.cancelled() and task.exception() is not None:
            self.errors += 1
            self.last_error = repr(task.exception())
            self.log.error("background task failed", component=self.name, task=task.get_name(),
                           exc_info=task.exception() or False)

    # -- lifecycle -----------------------------------------------------------------------------

    def set_leader_only(self, leader_only: bool) -> None:
        """Change the leadership gating before the component starts (the registry does this)."""
        if self.running:
            raise RuntimeError(f"component {self.name} is running; cannot change leader_only")
        self.leader_only = leader_only
        if self.subscription is not None:
            if leader_only:
                self.subscription.deactivate()
            else:
                self.subscription.activate()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start the loop and wait until it is ready. Raises what ``on_start`` raised."""
        if self.running:
            return
        self.ready.clear()
        self.done.clear()
        if self.subscription is not None:
            self.subscription.activate()
        task = self._task = asyncio.get_running_loop().create_task(self.run(), name=f"component:{self.name}")
        ready = asyncio.ensure_future(self.ready.wait())
        try:
            await asyncio.wait((task, ready), return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if task.done() and not self.ready.is_set():
            task.result()  # re-raises the on_start failure
            raise RuntimeError(f"component {self.name} ended before it was ready")

    async def stop(self) -> None:
        """Cancel the loop and wait for it to end; leader-only queues are discarded."""
        task = self._task
        if task is not None:
            # Not ``suppress(CancelledError)``: a stop() that is itself cancelled must end (issue: leader kill hang).
            await cancel_and_wait(task)
        if self.leader_only and self.subscription is not None:
            self.subscription.deactivate()

    async def run(self) -> None:
        """The loop itself; ``start()`` runs it as a task, or await it in your own task group."""
        try:
            await self.on_start()
            self.ready.set()
            sub = self.subscription
            if sub is None:
                await asyncio.Future()  # nothing to consume: live until cancelled
                return
            while True:
                event = sub.get_nowait()  # cheaper than awaiting get() while a backlog is queued
                if event is None:
                    try:
                        event = await sub.get()
                    except SubscriptionClosed:
                        return
                await self._process(event)
        finally:
            self.ready.clear()
            for task in list(self._background):
                task.cancel()
            if self._background:
                await asyncio.gather(*self._background, return_exceptions=True)
            try:
                await self.on_stop()
            except Exception:
                self.log.exception("on_stop failed", component=self.name)
            finally:
                self.done.set()

    async def _process(self, event: Event) -> None:
        self._current = event
        self._processing_since = self.clock.monotonic()
        try:
            await self.handle(event)
        except Exception as exc:
            self.errors += 1
            self.last_error = f"{event.type}: {exc!r}"
            self.log.exception("handler failed", component=self.name, event_type=event.type, event_id=event.event_id)
        finally:
            self._current = None
            self._processing_since = None
            self.processed += 1

    def health(self) -> Health:
        """Unhealthy when not running, or when one event has been processing beyond ``stall_timeout``."""
        task = self._task
        if task is None:
            return Health(False, "not started")
        if task.done():
            if not task.cancelled() and task.exception() is not None:
                return Health(False, f"crashed: {task.exception()!r}")
            return Health(False, "stopped")
        since = self._processing_since
        if since is not None:
            busy = self.clock.monotonic() - since
            if busy > self.stall_timeout:
                current = self._current.type if self._current is not None else "?"
                return Health(False, f"stalled: processing {current} for {busy:.1f}s")
        return Health(True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} running={self.running} processed={self.processed}>"
