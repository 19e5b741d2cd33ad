"""A Lease-based leader elector (``coordination.k8s.io/v1``) over the ``KubeAPI`` port.

Semantics follow client-go's elector: a candidate acquires the Lease when it is free (no holder) or
when the holder has not renewed it for ``lease_duration`` *as observed locally* (the expiry is
measured from the moment this candidate saw the record change, on its own monotonic clock, never
from another host's wall-clock ``renewTime``). The leader renews every ``retry_period`` and steps
down when no renew succeeded for ``renew_deadline``. Writes carry the read ``resourceVersion``, so
two candidates racing for the same record get one winner and one ``409`` (the loser re-reads).

Added over client-go: release on stop (``holderIdentity`` cleared, so a follower acquires at its
next attempt instead of waiting for expiry), re-campaign after loss, and a clock that is injected
(``ElectionClock``), so that the simulator's virtual time gives exact failover times.

Pure: talks only to the ``KubeAPI`` it is handed. Must not import ``haptic.controller`` or
``haptic.live``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from haptic.core.tasks import cancel_and_wait
from haptic.k8s.api import JSON, ApiError, Conflict, KubeAPI, NotFound, ResourceRef, Selectors, WatchOptions

__all__ = [
    "LEASES",
    "NO_FENCE",
    "ElectionClock",
    "ElectionConfig",
    "LeaderElector",
    "LeaseRecord",
    "Transition",
    "TransitionKind",
    "WriteFence",
    "format_micro_time",
]

_log = logging.getLogger(__name__)

LEASES = ResourceRef("coordination.k8s.io/v1", "leases", namespaced=True, kind="Lease")

TransitionKind = Literal["became_leader", "lost_leadership", "new_leader"]


class WriteFence(Protocol):
    """What a leader-only writer (the deployer) asks before each write to the world it leads.

    ``refusal()`` is ``""`` while this replica can prove it leads (it holds the Lease and renewed it
    within the renew deadline), else why not; ``writes_allowed_from()`` is the monotonic time before
    which a fresh leader must not write: the window in which the previous holder may still be writing.
    """

    def refusal(self) -> str: ...

    def writes_allowed_from(self) -> float: ...


class _NoFence:
    """Leader election disabled: a standalone replica always leads."""

    def refusal(self) -> str:
        return ""

    def writes_allowed_from(self) -> float:
        return 0.0


NO_FENCE: WriteFence = _NoFence()


class ElectionClock(Protocol):
    """The time the elector needs (``haptic.core.Clock`` provides it): a monotonic clock for expiry,
    wall time for the Lease's ``acquireTime``/``renewTime``, and sleeping."""

    def monotonic(self) -> float: ...

    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class ElectionConfig:
    """Where the Lease lives, who we are, and the timings (defaults as the original: 15s/10s/2s)."""

    lease_name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_stop: bool = True
    #: Also watch the Lease, so that a release (or a foreign write) wakes a waiting candidate at once
    #: instead of at its next ``retry_period`` tick. Falls back to polling alone when watching fails.
    watch_lease: bool = True

    def __post_init__(self) -> None:
        if not self.identity:
            raise ValueError("leader election: identity must not be empty")
        if not self.lease_name or not self.namespace:
            raise ValueError("leader election: lease name and namespace must not be empty")
        if self.retry_period <= 0:
            raise ValueError(f"leader election: retry_period must be > 0, got {self.retry_period}")
        # client-go's safety margins: the leader must give up before followers consider it expired.
        if not self.lease_duration > self.renew_deadline:
            raise ValueError(
                f"leader election: lease_duration ({self.lease_duration}) must be greater than "
                f"renew_deadline ({self.renew_deadline})"
            )
        if not self.renew_deadline > self.retry_period:
            raise ValueError(
                f"leader election: renew_deadline ({self.renew_deadline}) must be greater than "
                f"retry_period ({self.retry_period})"
            )


@dataclass(frozen=True)
class Transition:
    """One leadership change as seen by this candidate.

    ``became_leader`` / ``lost_leadership`` concern this candidate; ``new_leader`` reports a change of
    the observed holder (``holder`` is ``None`` when the Lease was released or is absent).
    """

    kind: TransitionKind
    identity: str
    holder: str | None
    at: float
    reason: str = ""


@dataclass(frozen=True)
class LeaseRecord:
    """The ``spec`` of a Lease, as plain values."""

    holder_identity: str | None
    lease_duration_seconds: int | None
    acquire_time: str | None
    renew_time: str | None
    lease_transitions: int

    @classmethod
    def from_lease(cls, lease: JSON) -> LeaseRecord:
        spec = lease.get("spec") or {}
        duration = spec.get("leaseDurationSeconds")
        return cls(
            holder_identity=spec.get("holderIdentity") or None,
            lease_duration_seconds=int(duration) if duration is not None else None,
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> JSON:
        spec: JSON = {"leaseTransitions": self.lease_transitions}
        if self.holder_identity is not None:
            spec["holderIdentity"] = self.holder_identity
        if self.lease_duration_seconds is not None:
            spec["leaseDurationSeconds"] = self.lease_duration_seconds
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        return spec


def format_micro_time(moment: datetime) -> str:
    """Kubernetes ``MicroTime``: UTC, microseconds, ``Z`` suffix (naive datetimes are taken as UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


TransitionCallback = Callable[[Transition], None]


@dataclass
class _Observed:
    record: LeaseRecord | None = None
    resource_version: str | None = None
    at: float = 0.0


@dataclass
class _Subscribers:
    queues: list[asyncio.Queue[Transition | None]] = field(default_factory=list)
    callbacks: list[TransitionCallback] = field(default_factory=list)


class LeaderElector:
    """Campaigns for a Lease, holds it while renewals succeed, re-campaigns after a loss.

    Run it with ``await elector.run()`` (or as a task) and stop it with ``await elector.stop()``.
    Transitions reach ``on_transition`` callbacks (called synchronously, in order) and every
    ``transitions()`` iterator.
    """

    def __init__(self, api: KubeAPI, config: ElectionConfig, clock: ElectionClock) -> None:
        self._api = api
        self._config = config
        self._clock = clock
        self._observed = _Observed()
        self._leader = False
        self._holder: str | None = None
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._subscribers = _Subscribers()
        self._last_renew = 0.0
        self._release_on_stop = config.release_on_stop
        self._failures = 0
        self._running = False
        self._finished = asyncio.Event()
        #: When the last successful acquire/renew attempt started (its write took effect after this).
        self._renew_sent = 0.0
        #: When this candidate last saw another identity renew the Lease (None: since then released).
        self._other_renewed_at: float | None = None
        self._writes_from = 0.0

    # -- public state --------------------------------------------------------------------------

    @property
    def config(self) -> ElectionConfig:
        return self._config

    @property
    def is_leader(self) -> bool:
        return self._leader

    @property
    def observed_leader(self) -> str | None:
        """The holder identity last seen in the Lease (``None``: free or unknown)."""
        return self._holder

    # -- fencing (WriteFence) ------------------------------------------------------------------

    def refusal(self) -> str:
        """``""`` while this replica can prove it leads, else why not (see ``WriteFence``).

        The leader's last successful renew started at ``t``: followers measure expiry from when they
        saw that write, so none acquires before ``t + lease_duration``; writes stop at ``t +
        renew_deadline`` (when the elector steps down too), the difference being the safety margin.
        """
        if not self._leader:
            return "not the leader"
        holder = self._observed.record.holder_identity if self._observed.record is not None else None
        if holder != self._config.identity:
            return f"the Lease is held by {holder or 'nobody'}"
        elapsed = self._clock.monotonic() - self._renew_sent
        if elapsed >= self._config.renew_deadline:
            return (f"the Lease was last renewed {elapsed:.1f}s ago (renew deadline "
                    f"{self._config.renew_deadline:g}s): leadership cannot be proven")
        return ""

    def writes_allowed_from(self) -> float:
        """Before this monotonic time a fresh leader must not write: the previous holder, which this
        candidate last saw renew at ``o``, may write until ``o + renew_deadline`` (plus one retry period
        for a request in flight). Acquired by expiry, that time is long past; handed the Lease by a
        foreign write while the holder was alive, the new leader waits it out. A released Lease needs no
        wait: the holder stops writing before it releases."""
        return self._writes_from

    def on_transition(self, callback: TransitionCallback) -> None:
        self._subscribers.callbacks.append(callback)

    async def transitions(self) -> AsyncIterator[Transition]:
        """Yields every transition from now until the elector stops."""
        queue: asyncio.Queue[Transition | None] = asyncio.Queue()
        self._subscribers.queues.append(queue)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                yield item
        finally:
            self._subscribers.queues.remove(queue)

    # -- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Campaign, lead, and campaign again after a loss, until ``stop()``.

        Cancelling the task that runs this is a crash, not a graceful stop: the Lease is not released
        and followers take over once it expires.
        """
        if self._running:
            raise RuntimeError("leader election: run() is already running")
        self._running = True
        self._finished.clear()
        # A stopped elector may run again (e.g. its component restarted).
        self._stopping.clear()
        self._wake.clear()
        watcher = asyncio.create_task(self._watch_lease(), name="lease-watch") if self._config.watch_lease else None
        try:
            while not self._stopping.is_set():
                if not await self._acquire():
                    break
                await self._renew_until_lost()
            if self._leader:
                self._set_leader(False, "stopped")
                if self._release_on_stop:
                    await self._release()
        finally:
            if watcher is not None:
                await cancel_and_wait(watcher)
            self._running = False
            self._finished.set()
            for queue in self._subscribers.queues:
                queue.put_nowait(None)

    async def release(self) -> None:
        """Frees the Lease if this candidate holds it (after ``stop(release=False)``, once the writes
        that leadership allowed have stopped)."""
        self._release_on_stop = self._config.release_on_stop
        await self._release()

    async def stop(self, release: bool | None = None) -> None:
        """Ends ``run()`` and waits for it; a leader releases the Lease first (unless told not to).

        The release happens after any renew in flight, so a late renew cannot re-take the Lease.
        """
        if release is not None:
            self._release_on_stop = release
        self._stopping.set()
        self._wake.set()
        if self._running:
            await self._finished.wait()

    def nudge(self) -> None:
        """Makes a waiting candidate try again now (e.g. when a watch saw the Lease released)."""
        self._wake.set()

    # -- the lease watch -----------------------------------------------------------------------

    async def _watch_lease(self) -> None:
        """Nudges the campaign when the Lease changes under a waiting candidate (e.g. it was released)."""
        cfg = self._config
        options = WatchOptions(
            allow_bookmarks=False, selectors=Selectors(field_selector=f"metadata.name={cfg.lease_name}")
        )
        while not self._stopping.is_set():
            try:
                async for event in self._api.watch(LEASES, cfg.namespace, options):
                    if event.type == "ERROR":
                        options.resource_version = None
                        break
                    version = (event.object.get("metadata") or {}).get("resourceVersion")
                    if event.type != "BOOKMARK":
                        self._on_lease_event(event.object, version)
                    if version:
                        options.resource_version = str(version)
            except ApiError as exc:
                options.resource_version = None
                _log.debug("leader election: lease watch failed (%s); polling only until it recovers", exc)
            except (OSError, NotImplementedError) as exc:
                _log.debug("leader election: lease watch unavailable (%s)", exc)
            await self._clock.sleep(cfg.retry_period)

    def _on_lease_event(self, lease: JSON, version: object) -> None:
        if not _newer(version, self._observed.resource_version):
            return  # our own write, or older than what a read already showed
        record = self._observe(lease)
        # Only a free Lease, or one taken from under us, is worth acting on before the next tick.
        if record.holder_identity is None or (self._leader and record.holder_identity != self._config.identity):
            self._wake.set()

    # -- the loops -----------------------------------------------------------------------------

    async def _acquire(self) -> bool:
        """Tries every ``retry_period`` (sooner if the observed lease expires first) until acquired."""
        while not self._stopping.is_set():
            if await self._try_acquire_or_renew():
                now = self._last_renew = self._clock.monotonic()
                other = self._other_renewed_at
                self._writes_from = now if other is None else max(
                    now, other + self._config.renew_deadline + self._config.retry_period)
                self._set_leader(True, "acquired")
                return True
            await self._pause(self._next_acquire_delay())
        return False

    async def _renew_until_lost(self) -> None:
        cfg = self._config
        while not self._stopping.is_set():
            deadline = self._last_renew + cfg.renew_deadline
            await self._pause(min(cfg.retry_period, max(0.0, deadline - self._clock.monotonic())))
            if self._stopping.is_set() or not self._leader:
                return
            remaining = deadline - self._clock.monotonic()
            renewed = False
            if remaining > 0:
                try:
                    async with asyncio.timeout(remaining):
                        renewed = await self._try_acquire_or_renew()
                except TimeoutError:
                    renewed = False
            if self._stopping.is_set() or not self._leader:
                return
            if renewed:
                self._last_renew = self._clock.monotonic()
                continue
            if self._holder is not None and self._holder != cfg.identity:
                self._set_leader(False, "lease taken by another holder")
                return
            if self._clock.monotonic() >= deadline:
                self._set_leader(False, "renew deadline exceeded")
                return

    async def _pause(self, seconds: float) -> None:
        if self._wake.is_set():
            self._wake.clear()
            if not self._stopping.is_set():
                return
        if self._stopping.is_set():
            return
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        waker = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait([sleeper, waker], return_when=asyncio.FIRST_COMPLETED)
        finally:
            # A cancellation of this task that lands while the loser is reaped must end the pause (with
            # ``suppress(CancelledError)`` here, a crash-kill of the leader was swallowed and the elector
            # renewed on forever: the leader-killed-mid-deployment finding).
            for task in (sleeper, waker):
                await cancel_and_wait(task)
        self._wake.clear()

    def _next_acquire_delay(self) -> float:
        """``retry_period``, shortened to wake exactly when the observed holder's lease expires."""
        delay = self._config.retry_period
        record = self._observed.record
        if record is not None and record.holder_identity and record.holder_identity != self._config.identity:
            expires_in = self._observed.at + self._lease_duration_of(record) - self._clock.monotonic()
            if expires_in > 0:
                delay = min(delay, expires_in)
        return delay

    def _lease_duration_of(self, record: LeaseRecord) -> float:
        if record.lease_duration_seconds is not None:
            return float(record.lease_duration_seconds)
        return self._config.lease_duration

    # -- one attempt ---------------------------------------------------------------------------

    async def _try_acquire_or_renew(self) -> bool:
        started = self._clock.monotonic()
        if await self._attempt():
            self._renew_sent = started
            return True
        return False

    async def _attempt(self) -> bool:
        cfg = self._config
        try:
            lease = await self._api.get(LEASES, cfg.lease_name, cfg.namespace)
        except NotFound:
            return await self._create()
        except ApiError as exc:
            self._failed("leader election: cannot read lease %s/%s: %s", cfg.namespace, cfg.lease_name, exc)
            return False
        except OSError as exc:
            self._failed("leader election: cannot reach the API for lease %s: %s", cfg.lease_name, exc)
            return False
        self._succeeded()
        record = self._observe(lease)
        now = self._clock.monotonic()
        held_by_other = record.holder_identity is not None and record.holder_identity != cfg.identity
        if held_by_other and self._observed.at + self._lease_duration_of(record) > now:
            return False
        wall = format_micro_time(self._clock.now())
        duration = _seconds(cfg.lease_duration)
        if record.holder_identity == cfg.identity:
            # Same holder: no change of hands. A new term (after a loss) gets a new acquireTime.
            acquired = record.acquire_time if self._leader else wall
            new = LeaseRecord(cfg.identity, duration, acquired, wall, record.lease_transitions)
        else:
            new = LeaseRecord(cfg.identity, duration, wall, wall, record.lease_transitions + 1)
        updated = dict(lease)
        updated["metadata"] = dict(lease.get("metadata") or {})
        updated["spec"] = new.to_spec()
        return await self._write("update", self._api.replace(LEASES, updated))

    async def _create(self) -> bool:
        cfg = self._config
        wall = format_micro_time(self._clock.now())
        record = LeaseRecord(cfg.identity, _seconds(cfg.lease_duration), wall, wall, 0)
        body: JSON = {
            "apiVersion": LEASES.api_version,
            "kind": "Lease",
            "metadata": {"name": cfg.lease_name, "namespace": cfg.namespace},
            "spec": record.to_spec(),
        }
        return await self._write("create", self._api.create(LEASES, body, cfg.namespace))

    async def _write(self, verb: str, write: Awaitable[JSON]) -> bool:
        """Awaits one Lease write; True when it was stored (and observed)."""
        try:
            stored = await write
        except Conflict:
            # Someone else wrote in between: re-read so expiry is measured from their write.
            await self._reread()
            return False
        except ApiError as exc:
            self._failed("leader election: cannot %s lease %s: %s", verb, self._config.lease_name, exc)
            return False
        except OSError as exc:
            self._failed("leader election: cannot reach the API for lease %s: %s", self._config.lease_name, exc)
            return False
        self._observe(stored)
        self._succeeded()
        return True

    async def _reread(self) -> None:
        cfg = self._config
        with contextlib.suppress(ApiError, OSError):
            self._observe(await self._api.get(LEASES, cfg.lease_name, cfg.namespace))

    async def _release(self) -> None:
        cfg = self._config
        try:
            lease = await self._api.get(LEASES, cfg.lease_name, cfg.namespace)
            record = LeaseRecord.from_lease(lease)
            if record.holder_identity != cfg.identity:
                return
            wall = format_micro_time(self._clock.now())
            released = LeaseRecord(None, 1, wall, wall, record.lease_transitions)
            updated = dict(lease)
            updated["spec"] = released.to_spec()
            self._observe(await self._api.replace(LEASES, updated))
        except (ApiError, OSError) as exc:
            # Followers then take over once the lease expires, as after a crash.
            _log.warning("leader election: could not release lease %s: %s", cfg.lease_name, exc)

    def _failed(self, message: str, *args: object) -> None:
        # An outage fails every attempt: say it once, then quietly until the API answers again.
        self._failures += 1
        _log.log(logging.WARNING if self._failures == 1 else logging.DEBUG, message, *args)

    def _succeeded(self) -> None:
        if self._failures:
            _log.info("leader election: lease %s reachable again after %d failed attempts",
                      self._config.lease_name, self._failures)
            self._failures = 0

    # -- bookkeeping ---------------------------------------------------------------------------

    def _observe(self, lease: JSON) -> LeaseRecord:
        record = LeaseRecord.from_lease(lease)
        version = (lease.get("metadata") or {}).get("resourceVersion")
        if record != self._observed.record or version != self._observed.resource_version:
            self._observed = _Observed(record, version, self._clock.monotonic())
            if record.holder_identity is None:
                self._other_renewed_at = None
            elif record.holder_identity != self._config.identity:
                self._other_renewed_at = self._observed.at
        if record.holder_identity != self._holder:
            self._holder = record.holder_identity
            self._emit(Transition("new_leader", self._config.identity, self._holder, self._clock.monotonic()))
        return record

    def _set_leader(self, leading: bool, reason: str) -> None:
        if leading == self._leader:
            return
        self._leader = leading
        kind: TransitionKind = "became_leader" if leading else "lost_leadership"
        holder = self._config.identity if leading else self._holder
        self._emit(Transition(kind, self._config.identity, holder, self._clock.monotonic(), reason))

    def _emit(self, transition: Transition) -> None:
        _log.info(
            "leader election: %s (identity=%s holder=%s%s)",
            transition.kind,
            transition.identity,
            transition.holder,
            f" reason={transition.reason}" if transition.reason else "",
        )
        for callback in list(self._subscribers.callbacks):
            try:
                callback(transition)
            except Exception:
                _log.exception("leader election: transition callback failed")
        for queue in self._subscribers.queues:
            queue.put_nowait(transition)


def _newer(version: object, than: str | None) -> bool:
    """Whether a watched resourceVersion is newer than the observed one (opaque strings: when they
    are not both integers, any different version counts as newer)."""
    if version is None or than is None:
        return True
    a, b = str(version), than
    if a.isdigit() and b.isdigit():
        return int(a) > int(b)
    return a != b


def _seconds(value: float) -> int:
    return max(1, round(value))

