"""``LeaderElection``: wraps the Lease elector; leader-only components run while this replica leads.

On leadership the bus is paused, ``leader.became`` published, the leader-only components started
(their subscriptions become active) and the bus restarted, so they see ``leader.became`` and the
replays it causes (config, credentials, pods, an immediate reconciliation). On loss ``leader.lost``
is published and they stop and drop their state. With leader election disabled the replica leads
alone from the start ("standalone"). ``release()`` gives the Lease up (graceful shutdown and
reinitialization); a crash (cancellation) does not, and followers take over once the Lease expires.
"""

from __future__ import annotations

import asyncio

from haptic.controller.context import IterationContext
from haptic.controller.events import BecameLeader, LeaderElectionStarted, LeaderObserved, LostLeadership
from haptic.core import Component, EventBus, LifecycleRegistry
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector, Transition


class LeaderElection(Component):
    name = "leader-election"

    def __init__(self, bus: EventBus, ctx: IterationContext, registry: LifecycleRegistry) -> None:
        super().__init__(bus)
        self.ctx = ctx
        self.logger = ctx.logger(self.name)
        self.registry = registry
        settings = ctx.spec.controller.leader_election
        self.identity = ctx.ports.identity.pod_name
        self.enabled = settings.enabled
        self.elector: LeaderElector | None = None
        self._transitions: asyncio.Queue[Transition] = asyncio.Queue()
        self._stopping = False
        if self.enabled:
            self.elector = LeaderElector(ctx.ports.kube, ElectionConfig(
                lease_name=settings.lease_name, namespace=ctx.namespace, identity=self.identity,
                lease_duration=settings.lease_duration.total_seconds(),
                renew_deadline=settings.renew_deadline.total_seconds(),
                retry_period=settings.retry_period.total_seconds(),
            ), ctx.ports.clock)
            self.elector.on_transition(self._transitions.put_nowait)

    @property
    def is_leader(self) -> bool:
        return self.registry.is_leader

    async def on_start(self) -> None:
        if self.elector is None:
            await self._become("standalone")
            return
        settings = self.ctx.spec.controller.leader_election
        self.bus.publish(LeaderElectionStarted(identity=self.identity, lease_name=settings.lease_name,
                                               lease_namespace=self.ctx.namespace))
        self.spawn(self._follow(), "transitions")
        self.spawn(self.elector.run(), "elector")

    async def _follow(self) -> None:
        while True:
            transition = await self._transitions.get()
            if self._stopping:
                continue
            if transition.kind == "became_leader":
                await self._become("lease_acquired")
            elif transition.kind == "lost_leadership":
                await self._lose(transition.reason or "lease_lost")
            else:
                self.bus.publish(LeaderObserved(leader_identity=transition.holder or "",
                                                is_self=transition.holder == self.identity))

    async def _become(self, reason: str) -> None:
        self.bus.pause()
        self.bus.publish(BecameLeader(identity=self.identity, reason=reason))
        try:
            await self.registry.gain_leadership()
        finally:
            self.bus.start()

    async def _lose(self, reason: str) -> None:
        self.bus.publish(LostLeadership(identity=self.identity, reason=reason))
        await self.registry.lose_leadership()

    async def release(self) -> None:
        """Graceful: stop leading (leader-only components first), then give the Lease up."""
        self._stopping = True
        if self.registry.is_leader:
            self.bus.publish(LostLeadership(identity=self.identity, reason="shutdown"))
            await self.registry.lose_leadership()
        if self.elector is not None:
            await self.elector.stop(release=True)
