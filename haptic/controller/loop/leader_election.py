"""The leader election component: runs the Lease elector and turns its transitions into leadership.

On ``became_leader`` it starts the leader-only components through the lifecycle registry, with the
bus paused and ``BecameLeader`` announced into the pause (so the fresh components see it and all that
follows, in order). On a loss it publishes ``LostLeadership`` and stops them. A change of the observed
holder becomes ``LeaderObserved``. With no elector (leader election disabled) the replica is a
standalone leader from the start (``BecameLeader(reason="standalone")``).

Stopping the component (``stop()`` or ``release()``) stops the elector gracefully, applies the loss
(leader-only components stop), then releases the Lease so a follower takes over at once; in
standalone mode it gives leadership up with ``LostLeadership(reason="stopped")``. ``abandon()`` is a
crash: the elector is cancelled, the Lease is kept and followers take over once it expires.
"""

from __future__ import annotations

import asyncio

from haptic.controller.events import BecameLeader, LeaderElectionStarted, LeaderObserved, LostLeadership
from haptic.core import Component, EventBus, LifecycleRegistry
from haptic.k8s.leaderelection import LeaderElector, Transition

__all__ = ["LeaderElection"]


class LeaderElection(Component):
    """All-replica component; register it in the same registry whose leadership it drives."""

    name = "leader-election"
    subscribes = ()

    def __init__(
        self, bus: EventBus, registry: LifecycleRegistry, elector: LeaderElector | None, identity: str = ""
    ) -> None:
        super().__init__(bus)
        self._registry = registry
        self._elector = elector
        self.identity = elector.config.identity if elector is not None else identity
        self._transitions: asyncio.Queue[Transition | None] = asyncio.Queue()
        self._elector_task: asyncio.Task[None] | None = None
        self._follow_task: asyncio.Task[None] | None = None
        if elector is not None:
            # A callback, not ``transitions()``: it cannot miss a transition however tasks are scheduled.
            elector.on_transition(self._transitions.put_nowait)

    @property
    def elector(self) -> LeaderElector | None:
        return self._elector

    async def on_start(self) -> None:
        if self._elector is None:
            await self._registry.gain_leadership(
                bus=self.bus, announce=BecameLeader(identity=self.identity, reason="standalone")
            )
            return
        cfg = self._elector.config
        self.publish(
            LeaderElectionStarted(identity=cfg.identity, lease_name=cfg.lease_name, lease_namespace=cfg.namespace),
            new_correlation=True,
        )
        self._follow_task = self.spawn(self._follow(), "transitions")
        self._elector_task = self.spawn(self._elector.run(), "elector")

    @property
    def is_leader(self) -> bool:
        return self._registry.is_leader

    async def stop(self) -> None:
        """Graceful: the elector releases the Lease, the resulting loss is applied, then the loop ends."""
        if self._elector is not None and self._elector_task is not None and not self._elector_task.done():
            # The Lease is released only once the loss is applied (leader-only components stopped, the
            # deployer's writes ended): released first, a follower could start deploying while they run.
            await self._elector.stop(release=False)
            self._transitions.put_nowait(None)
            if self._follow_task is not None:
                await asyncio.gather(self._follow_task, return_exceptions=True)
            if self._elector.config.release_on_stop:
                await self._elector.release()
        elif self._elector is None and self._registry.is_leader:
            self.publish(LostLeadership(identity=self.identity, reason="stopped"), new_correlation=True)
            await self._registry.lose_leadership()
        await super().stop()

    async def release(self) -> None:
        """Graceful shutdown and reinitialization: stop leading (leader-only components first), free the Lease."""
        await self.stop()

    async def abandon(self) -> None:
        """A crash: tasks cancelled, the Lease not released (followers wait for it to expire)."""
        await super().stop()

    async def _follow(self) -> None:
        while (transition := await self._transitions.get()) is not None:
            await self._apply(transition)

    async def _apply(self, transition: Transition) -> None:
        if transition.kind == "became_leader":
            await self._registry.gain_leadership(
                bus=self.bus, announce=BecameLeader(identity=self.identity, reason="lease_acquired")
            )
        elif transition.kind == "lost_leadership":
            reason = "stopped" if transition.reason == "stopped" else "lease_lost"
            self.publish(LostLeadership(identity=self.identity, reason=reason), new_correlation=True)
            await self._registry.lose_leadership()
        elif transition.holder is not None:
            self.publish(
                LeaderObserved(leader_identity=transition.holder, is_self=transition.holder == self.identity),
                new_correlation=True,
            )
