"""The lifecycle registry: starts components in dependency order, gates leader-only ones, reports health.

Example::

    registry = LifecycleRegistry()
    registry.register(loader)
    registry.register(reconciler, depends_on=("config-loader",))
    registry.register(deployer, leader_only=True)     # default: the component's ``leader_only``
    await registry.start()            # all-replica components, dependencies first
    await registry.gain_leadership(bus=bus, announce=BecameLeader(...))  # leader-only ones, deps first
    await registry.lose_leadership()  # leader-only components stop (reverse order), back to standby
    registry.health()                 # HealthReport(healthy, components={name: ComponentHealth})
    await registry.stop()             # everything, reverse start order

Dependencies must point at registered components; a leader-only component may depend on an
all-replica one, not the reverse; cycles are rejected. Ties are broken by registration order, so
the start order is deterministic.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from haptic.core.bus import EventBus
from haptic.core.component import Component, Health
from haptic.core.errors import DependencyError as DependencyError
from haptic.core.errors import StartError as StartError
from haptic.core.event import Event

_log = logging.getLogger(__name__)


class Lifecycle(Protocol):
    """What the registry manages; ``Component`` implements it."""

    @property
    def name(self) -> str: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def health(self) -> Health: ...


class Status(enum.StrEnum):
    PENDING = "pending"
    STARTING = "starting"
    RUNNING = "running"
    STANDBY = "standby"
    STOPPED = "stopped"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ComponentHealth:
    status: Status
    healthy: bool
    reason: str = ""
    leader_only: bool = False


@dataclass(frozen=True, slots=True)
class HealthReport:
    healthy: bool
    components: dict[str, ComponentHealth]

    def to_dict(self) -> dict[str, object]:
        return {
            "status": "ok" if self.healthy else "degraded",
            "components": {
                name: {"status": str(c.status), "healthy": c.healthy, "reason": c.reason}
                for name, c in self.components.items()
            },
        }


@dataclass
class _Entry:
    component: Lifecycle
    depends_on: tuple[str, ...]
    leader_only: bool
    status: Status = Status.PENDING
    error: str = ""


class LifecycleRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._leader = False
        self._started = False

    def register(self, component: Lifecycle, *, depends_on: Sequence[str] = (),
                 leader_only: bool | None = None) -> None:
        name = component.name
        if name in self._entries:
            raise ValueError(f"component {name!r} is already registered")
        if leader_only is None:
            leader_only = bool(getattr(component, "leader_only", False))
        elif isinstance(component, Component):
            component.set_leader_only(leader_only)
        self._entries[name] = _Entry(component, tuple(depends_on), leader_only)

    @property
    def is_leader(self) -> bool:
        return self._leader

    def start_order(self, *, leader_only: bool | None = None) -> list[str]:
        """Names in dependency order (registration order among independent ones), optionally filtered."""
        order = self._topological_order()
        if leader_only is None:
            return order
        return [n for n in order if self._entries[n].leader_only == leader_only]

    def _topological_order(self) -> list[str]:
        for name, entry in self._entries.items():
            for dep in entry.depends_on:
                if dep not in self._entries:
                    raise DependencyError(f"component {name!r} depends on unknown component {dep!r}")
                if self._entries[dep].leader_only and not entry.leader_only:
                    raise DependencyError(f"all-replica component {name!r} cannot depend on leader-only {dep!r}")
        order: list[str] = []
        state: dict[str, int] = {}  # 1 visiting, 2 done

        def visit(name: str, path: list[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = [*path[path.index(name):], name]
                raise DependencyError(f"dependency cycle: {' -> '.join(cycle)}")
            state[name] = 1
            for dep in self._entries[name].depends_on:
                visit(dep, [*path, name])
            state[name] = 2
            order.append(name)

        for name in self._entries:
            visit(name, [])
        return order

    async def start(self) -> None:
        """Start all-replica components (leader-only ones wait in standby). Raises ``StartError``."""
        order = self._topological_order()
        self._started = True
        for name in order:
            if self._entries[name].leader_only:
                self._entries[name].status = Status.STANDBY
        await self._start_all([n for n in order if not self._entries[n].leader_only])
        if self._leader:
            await self._start_all(self.start_order(leader_only=True))

    async def gain_leadership(self, *, bus: EventBus | None = None, announce: Event | None = None) -> None:
        """Start leader-only components in dependency order (once the registry started).

        With ``bus``, the bus is paused meanwhile and ``announce`` (e.g. ``BecameLeader``) published into
        the pause; the bus then resumes (if it was running), so the freshly started components receive
        the announcement and everything published while they were starting, in order.
        """
        if self._leader:
            return
        self._leader = True
        was_started = bus is not None and bus.started
        if bus is not None:
            bus.pause()
            if announce is not None:
                bus.publish(announce)
        try:
            if self._started:
                await self._start_all(self.start_order(leader_only=True))
        finally:
            if bus is not None and was_started:
                bus.start()

    async def lose_leadership(self) -> None:
        """Stop leader-only components in reverse order; they return to standby."""
        if not self._leader:
            return
        self._leader = False
        for name in reversed(self.start_order(leader_only=True)):
            entry = self._entries[name]
            if entry.status in (Status.RUNNING, Status.STARTING, Status.FAILED):
                await self._stop_one(name)
            entry.status = Status.STANDBY

    async def stop(self) -> None:
        """Stop every started component, dependents first."""
        for name in reversed(self._topological_order()):
            if self._entries[name].status in (Status.RUNNING, Status.STARTING):
                await self._stop_one(name)
        self._started = False
        self._leader = False

    async def _start_all(self, names: list[str]) -> None:
        for name in names:
            entry = self._entries[name]
            if entry.status == Status.RUNNING:
                continue
            blocked = [d for d in entry.depends_on if self._entries[d].status != Status.RUNNING]
            if blocked:
                entry.status, entry.error = Status.FAILED, f"dependencies not running: {', '.join(blocked)}"
                raise StartError(f"cannot start {name!r}: {entry.error}")
            entry.status, entry.error = Status.STARTING, ""
            try:
                await entry.component.start()
            except Exception as exc:
                entry.status, entry.error = Status.FAILED, repr(exc)
                _log.exception("component %s failed to start", name)
                raise StartError(f"component {name!r} failed to start: {exc!r}") from exc
            entry.status = Status.RUNNING
            _log.debug("component %s started", name)

    async def _stop_one(self, name: str) -> None:
        entry = self._entries[name]
        try:
            await entry.component.stop()
        except Exception as exc:
            entry.error = repr(exc)
            _log.exception("component %s failed to stop", name)
        entry.status = Status.STOPPED

    def status(self, name: str) -> Status:
        return self._entries[name].status

    def statuses(self) -> dict[str, Status]:
        return {name: e.status for name, e in self._entries.items()}

    def health(self) -> HealthReport:
        """Running components report their own health; standby is healthy; anything else is not."""
        components: dict[str, ComponentHealth] = {}
        for name, entry in self._entries.items():
            if entry.status == Status.RUNNING:
                h = entry.component.health()
                components[name] = ComponentHealth(entry.status, h.healthy, h.reason, entry.leader_only)
            elif entry.status == Status.STANDBY:
                components[name] = ComponentHealth(entry.status, True, "", entry.leader_only)
            else:
                components[name] = ComponentHealth(entry.status, False, entry.error or str(entry.status),
                                                   entry.leader_only)
        return HealthReport(all(c.healthy for c in components.values()), components)
