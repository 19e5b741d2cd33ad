"""``IngressStatusWriter`` (leader-only): the load balancer address in the status of the Ingresses served.

Served: of the controller's IngressClass (``extraContext.ingressClass``, by ``spec.ingressClassName`` or
the legacy annotation; Ingresses without a class only with ``watchIngressWithoutClass``; every watched
Ingress when no class is configured) and not skipped as hostile. Other Ingresses belong to other
controllers or are not routed: their status is left alone.
The address is the configured publish address, or else the IPs of the admitted HAProxy pods (sorted).
An Ingress the render leaves out (``resource.excluded``: a host another namespace owns, lines
``haproxy -c`` rejects, ...) carries the reason as its port status error, the one error field an
Ingress status has: ``status.loadBalancer.ingress[].ports[] = {port, protocol: TCP, error:
haproxy-haptic.org/<Reason>}`` (``kubectl get ingress X -o jsonpath='{..ports[*].error}'``); it is
cleared when the object is rendered again (``resource.readmitted``).
Only Ingresses whose status differs are patched, so the resulting watch events settle at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import INGRESSES, IterationContext
from haptic.controller.events import (
    BecameLeader,
    HAProxyPodsDiscovered,
    ResourceExcluded,
    ResourceIndexUpdated,
    ResourceReadmitted,
)
from haptic.core import Event, EventBus
from haptic.k8s.api import ApiError
from haptic.templating.filters import ingress_class
from haptic.templating.safety import unsafe_reasons


def _ip_of(url: str) -> str:
    host = url.split("//", 1)[-1].rsplit(":", 1)[0]
    return host.strip("[]")


class IngressStatusWriter(IterationComponent):
    name = "ingress-status"
    subscribes = (HAProxyPodsDiscovered, ResourceIndexUpdated, BecameLeader, ResourceExcluded, ResourceReadmitted)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.stores = sorted(n for n, w in ctx.spec.watched_resources.items()
                             if w.resources == INGRESSES.plural and w.api_version == INGRESSES.api_version)
        self.addresses: list[str] = [ctx.ports.publish_address] if ctx.ports.publish_address else []
        self.patched = 0
        # Verdicts by (namespace, name, resourceVersion): unchanged Ingresses are not checked again.
        self._verdicts: dict[tuple[str, str, str], bool] = {}
        self._seen: dict[tuple[str, str, str], bool] = {}
        #: (namespace, name) -> why the render leaves that Ingress out
        self.excluded: dict[tuple[str, str], str] = {}
        extra = ctx.spec.templating_settings.extra_context
        port = extra.get("httpPort", 8080)
        self.port = port if isinstance(port, int) and 0 < port < 65536 else 8080

    async def handle(self, event: Event) -> None:
        if isinstance(event, HAProxyPodsDiscovered) and not self.ctx.ports.publish_address:
            self.addresses = sorted({_ip_of(e.url) for e in event.endpoints})
        elif isinstance(event, ResourceIndexUpdated) and event.resource_type not in self.stores:
            return
        elif isinstance(event, ResourceExcluded | ResourceReadmitted):
            if event.kind != INGRESSES.kind:
                return
            if isinstance(event, ResourceExcluded):
                self.excluded[(event.namespace, event.name)] = event.reason
            else:
                self.excluded.pop((event.namespace, event.name), None)
        if self.addresses:
            await self.update()

    def serves(self, ing: Mapping[str, Any]) -> bool:
        meta = ing.get("metadata") or {}
        key = (str(meta.get("namespace")), str(meta.get("name")), str(meta.get("resourceVersion")))
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._serves(ing)
        self._seen[key] = verdict
        return verdict

    def _serves(self, ing: Mapping[str, Any]) -> bool:
        settings = self.ctx.spec.templating_settings.extra_context
        wanted = settings.get("ingressClass")
        if wanted and not ingress_class([ing], str(wanted), bool(settings.get("watchIngressWithoutClass", False))):
            return False
        return not unsafe_reasons(ing, "ingress")

    def desired(self, excluded_reason: str | None = None) -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = [
            {"hostname": a} if not any(ch.isdigit() for ch in a.split(".")[-1]) and ":" not in a else {"ip": a}
            for a in self.addresses]
        if excluded_reason is not None:
            error = f"haproxy-haptic.org/{excluded_reason}"
            points = [{**p, "ports": [{"port": self.port, "protocol": "TCP", "error": error}]} for p in points]
        return points

    async def update(self) -> None:
        routed = self.desired()
        self._seen = {}
        for store_name in self.stores:
            for ing in self.ctx.stores[store_name].list():
                meta = ing.get("metadata") or {}
                reason = self.excluded.get((str(meta.get("namespace") or ""), str(meta.get("name"))))
                if reason is None and not self.serves(ing):
                    continue
                desired = routed if reason is None else self.desired(reason)
                current = ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
                if current == desired:
                    continue
                try:
                    await self.ctx.ports.kube.patch(INGRESSES, str(meta.get("name")),
                                                    {"status": {"loadBalancer": {"ingress": desired}}}, "merge",
                                                    namespace=str(meta.get("namespace")), subresource="status")
                    self.patched += 1
                except ApiError as exc:
                    self.logger.warning("status of Ingress %s/%s not written: %s", meta.get("namespace"),
                                     meta.get("name"), exc)
        self._verdicts = self._seen
