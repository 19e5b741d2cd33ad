"""``ObjectEventRecorder`` (leader-only): a Kubernetes Event on every object the render reports on.

``resource.excluded`` becomes a ``Warning`` Event with the exclusion's reason (``HostConflict``,
``UnsafeInput``, ``RejectedByHAProxy``, ...) and message, ``resource.warning`` a ``Warning`` Event,
``resource.readmitted`` a ``Normal`` Event ``Readmitted``: what ``kubectl describe ingress`` and
``kubectl get events`` show. Events are core/v1 (what ``kubectl`` lists), in the object's namespace,
named ``<object>.<hex time>`` as client-go's recorder names them; a failed write is logged, never
retried (Events are best effort, the status and metrics carry the state).
"""

from __future__ import annotations

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import ResourceExcluded, ResourceReadmitted, ResourceWarning
from haptic.core import Event, EventBus
from haptic.k8s.api import JSON, ApiError, Conflict, ResourceRef

EVENTS = ResourceRef("v1", "events", True, "Event")
COMPONENT = "haptic-controller"
REPORTING_CONTROLLER = "haproxy-haptic.org/controller"
_MAX_MESSAGE = 1024


class ObjectEventRecorder(IterationComponent):
    name = "object-events"
    subscribes = (ResourceExcluded, ResourceWarning, ResourceReadmitted)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.written = 0
        self._last_stamp = 0

    async def handle(self, event: Event) -> None:
        if isinstance(event, ResourceExcluded | ResourceWarning):
            involved = {"kind": event.kind, "namespace": event.namespace, "name": event.name}
            if event.api_version:
                involved["apiVersion"] = event.api_version
            if event.uid:
                involved["uid"] = event.uid
            if event.field:
                involved["fieldPath"] = event.field
            await self.record(involved, "Warning", event.reason, event.message)
        elif isinstance(event, ResourceReadmitted) and event.exists:
            await self.record({"kind": event.kind, "namespace": event.namespace, "name": event.name}, "Normal",
                              "Readmitted", f"rendered again (had been excluded: {event.reason})")

    def _stamp(self) -> int:
        # Nanoseconds of (virtual or real) wall time, strictly increasing: names never collide.
        stamp = max(int(self.clock.now().timestamp() * 1e9), self._last_stamp + 1)
        self._last_stamp = stamp
        return stamp

    async def record(self, involved: dict[str, str], type_: str, reason: str, message: str) -> None:
        namespace = involved.get("namespace") or "default"
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        body: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{involved['name']}.{self._stamp():x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message[:_MAX_MESSAGE],
            "type": type_,
            "source": {"component": COMPONENT},
            "reportingComponent": REPORTING_CONTROLLER,
            "reportingInstance": self.ctx.ports.identity.pod_name,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            await self.ctx.ports.kube.create(EVENTS, body, namespace)
        except Conflict:
            pass  # the same name written twice: the Event exists
        except (ApiError, OSError) as exc:
            self.logger.warning("Event %s for %s %s/%s not written: %s", reason, involved["kind"], namespace,
                                involved["name"], exc)
            return
        self.written += 1
