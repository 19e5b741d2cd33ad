"""``IngressStatusWriter`` (leader-only): the load balancer address in every watched Ingress's status.

The address is the configured publish address, or else the IPs of the admitted HAProxy pods (sorted).
Only Ingresses whose status differs are patched, so the resulting watch events settle at once.
"""

from __future__ import annotations

from typing import Any

from haptic.controller.context import INGRESSES, IterationContext
from haptic.controller.events import BecameLeader, HAProxyPodsDiscovered, ResourceIndexUpdated
from haptic.core import Component, Event, EventBus
from haptic.k8s.api import ApiError


def _ip_of(url: str) -> str:
    host = url.split("//", 1)[-1].rsplit(":", 1)[0]
    return host.strip("[]")


class IngressStatusWriter(Component):
    name = "ingress-status"
    subscribes = (HAProxyPodsDiscovered, ResourceIndexUpdated, BecameLeader)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus)
        self.ctx = ctx
        self.logger = ctx.logger(self.name)
        self.stores = sorted(n for n, w in ctx.spec.watched_resources.items()
                             if w.resources == INGRESSES.plural and w.api_version == INGRESSES.api_version)
        self.addresses: list[str] = [ctx.ports.publish_address] if ctx.ports.publish_address else []
        self.patched = 0

    async def handle(self, event: Event) -> None:
        if isinstance(event, HAProxyPodsDiscovered) and not self.ctx.ports.publish_address:
            self.addresses = sorted({_ip_of(e.url) for e in event.endpoints})
        elif isinstance(event, ResourceIndexUpdated) and event.resource_type not in self.stores:
            return
        if self.addresses:
            await self.update()

    def desired(self) -> list[dict[str, Any]]:
        return [{"hostname": a} if not any(ch.isdigit() for ch in a.split(".")[-1]) and ":" not in a else {"ip": a}
                for a in self.addresses]

    async def update(self) -> None:
        desired = self.desired()
        for store_name in self.stores:
            for ing in self.ctx.stores[store_name].list():
                current = ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
                if current == desired:
                    continue
                meta = ing.get("metadata") or {}
                try:
                    await self.ctx.ports.kube.patch(INGRESSES, str(meta.get("name")),
                                                    {"status": {"loadBalancer": {"ingress": desired}}}, "merge",
                                                    namespace=str(meta.get("namespace")), subresource="status")
                    self.patched += 1
                except ApiError as exc:
                    self.logger.warning("status of Ingress %s/%s not written: %s", meta.get("namespace"),
                                     meta.get("name"), exc)
