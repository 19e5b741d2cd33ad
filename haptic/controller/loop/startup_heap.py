"""``StartupHeap``: keeps the garbage collector's full collections out of an iteration's startup.

An iteration's start builds what it keeps for its whole life: every listed object in the stores, the first
render's fragments and server slots, the parse of the deployed configuration — with 3,000 Ingresses some
400,000 tracked objects. CPython runs a full collection each time the old generation has grown by a quarter,
so that burst paid several full scans (100-500 ms each) of a heap without garbage, on the path to the first
deployment. So from the iteration's start until its first deployment completed (or its first reconciliation
failed, or it observed another replica leading, or ``STARTUP_WINDOW`` passed) the oldest generation is not
collected — the young ones still are, so short-lived cycles are freed as before — and then the thresholds come
back: the next full collection runs once, after the first deployment instead of several times before it.
Nothing is frozen: a freeze held for the iteration's life would keep every cycle frozen with it from ever
being collected, and would stop ``promote_young`` from moving a render's survivors along. The
collector is per process: replicas sharing one (the simulator) count their holds, and the thresholds come back
when the last hold ends.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from haptic.controller.events import DeploymentCompleted, LeaderObserved, ReconciliationFailed
from haptic.core import Clock, Component, Event, EventBus

__all__ = ["STARTUP_WINDOW", "StartupHeap"]

#: the longest a startup holds full collections off (seconds): a leader without pods never deploys
STARTUP_WINDOW = 30.0
#: the oldest generation's threshold while held: never reached in a startup
_HELD = 1 << 30


@dataclass
class _Process:
    holds: int = 0
    saved: tuple[int, int, int] | None = None


_PROCESS = _Process()


class StartupHeap(Component):
    """All-replica: ``hold()`` when the iteration starts, ``release()`` when it ends."""

    name = "startup-heap"
    subscribes = (DeploymentCompleted, ReconciliationFailed, LeaderObserved)

    def __init__(self, bus: EventBus, clock: Clock, window: float = STARTUP_WINDOW) -> None:
        super().__init__(bus)
        self.window = window
        self.holding = False
        self._timer = clock.timer(self.release)

    def hold(self) -> None:
        if self.holding:
            return
        self.holding = True
        if _PROCESS.holds == 0:
            _PROCESS.saved = gc.get_threshold()
            young, middle, _ = _PROCESS.saved
            gc.set_threshold(young, middle, _HELD)
        _PROCESS.holds += 1
        self._timer.start(self.window)

    async def handle(self, event: Event) -> None:
        if isinstance(event, LeaderObserved) and event.is_self:
            return
        self.release()

    async def on_stop(self) -> None:
        self.release()

    def release(self) -> None:
        """The startup is over (a deployment, a failure, another leader, the window) or the iteration ended
        during it: full collections resume once the process's last hold ends."""
        if not self.holding:
            return
        self.holding = False
        self._timer.cancel()
        _PROCESS.holds -= 1
        if _PROCESS.holds == 0 and _PROCESS.saved is not None:
            gc.set_threshold(*_PROCESS.saved)
            _PROCESS.saved = None
