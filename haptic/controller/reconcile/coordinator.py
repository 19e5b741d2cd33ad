"""``RenderValidateCoordinator`` (leader-only): render the templates against the live stores, then
validate the result with ``haproxy -c``.

Queued triggers are folded into one run ("latest wins"); a drift-prevention trigger keeps its reason
so that the scheduler forces the deployment. A render or validation failure is published and counted
and nothing else happens: the last good config stays deployed.
"""

from __future__ import annotations

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    ReconciliationCompleted,
    ReconciliationFailed,
    ReconciliationStarted,
    ReconciliationTriggered,
    ResourceExcluded,
    ResourceReadmitted,
    ResourceWarning,
    TemplateRendered,
    TemplateRenderFailed,
    TriggerReason,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.controller.reconcile.notice_tracker import NoticeTracker
from haptic.core import Event, EventBus
from haptic.names import HAPROXY_PODS
from haptic.templating.current_config_cache import CurrentConfigCache
from haptic.templating.engine import RenderInputs, RenderResult
from haptic.templating.errors import TemplatingError
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.validation.render_check import render_and_validate


def merged_reason(triggers: list[ReconciliationTriggered]) -> tuple[str, bool]:
    """The reason a folded run carries: drift wins, then the first non-coalescible one, else the latest."""
    reasons = [t.reason for t in triggers]
    if TriggerReason.DRIFT_PREVENTION in reasons:
        return str(TriggerReason.DRIFT_PREVENTION), False
    for trigger in triggers:
        if not trigger.coalescible:
            return trigger.reason, False
    return triggers[-1].reason, True


class RenderValidateCoordinator(IterationComponent):
    name = "reconciliation-coordinator"
    subscribes = (ReconciliationTriggered,)
    leader_only = True
    capacity = 1000

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.last_rendered: RenderResult | None = None
        self.renders = 0
        self._warnings: frozenset[str] = frozenset()
        self._deployed = CurrentConfigCache()
        self.notices = NoticeTracker()

    def render_inputs(self) -> RenderInputs:
        stores = {name: store for name, store in self.ctx.stores.items() if name != HAPROXY_PODS}
        return RenderInputs(
            stores=stores,
            haproxy_pods=self.ctx.stores.get(HAPROXY_PODS),
            extra_context=self.ctx.spec.templating_settings.extra_context,
            current_config=self._deployed.read(self.ctx.current_config),
            dirs=self.ctx.dirs,
            capabilities=self.ctx.capabilities,
            wall_time=self.clock.wall(),
        )

    def render(self) -> RenderResult:
        """A render of the live stores now, without validation (the simulator looks at it)."""
        self.renders += 1
        return self.ctx.engine.render(self.render_inputs())

    def _log_new_warnings(self, warnings: tuple[str, ...]) -> None:
        # Templates warn about every object they skip (hostile Ingresses, unusable Secrets) on every render:
        # say each once while it lasts, in render order.
        for warning in warnings:
            if warning not in self._warnings:
                self.logger.warning("template: %s", warning)
        self._warnings = frozenset(warnings)

    def _publish_notices(self, notices: tuple[ObjectNotice, ...], cause: Event) -> None:
        """The render's notices about single objects, each change once (see ``NoticeTracker``)."""
        changes = self.notices.update(notices)
        present = self._present({n.ref.key for n in changes.readmitted}) if changes.readmitted else set()
        for notice in changes.readmitted:
            ref = notice.ref
            exists = ref.key in present
            if exists:
                self.logger.info("%s is rendered again (was excluded: %s)", ref, notice.reason)
            self.publish(ResourceReadmitted(kind=ref.kind, namespace=ref.namespace, name=ref.name,
                                            reason=notice.reason, exists=exists), cause=cause)
        for notice in changes.excluded:
            ref = notice.ref
            self.publish(ResourceExcluded(kind=ref.kind, namespace=ref.namespace, name=ref.name, reason=notice.reason,
                                          message=notice.message, field=notice.field, api_version=ref.api_version,
                                          uid=ref.uid), cause=cause)
        for notice in changes.warned:
            ref = notice.ref
            self.publish(ResourceWarning(kind=ref.kind, namespace=ref.namespace, name=ref.name, reason=notice.reason,
                                         message=notice.message, field=notice.field, api_version=ref.api_version,
                                         uid=ref.uid), cause=cause)

    def _present(self, keys: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Which of these (kind, namespace, name) are still in a store (readmitted, not deleted)."""
        found = set()
        for store in self.ctx.stores.values():
            for obj in store.list():
                ref = object_ref(obj)
                if ref is not None and ref.key in keys:
                    found.add(ref.key)
        return found

    async def handle(self, event: Event) -> None:
        assert self.subscription is not None
        triggers = [event, *self.subscription.drain()]
        folded = [t for t in triggers if isinstance(t, ReconciliationTriggered)]
        reason, coalescible = merged_reason(folded)
        cause = folded[-1]
        self.publish(ReconciliationStarted(trigger=reason), cause=cause)
        started = self.clock.monotonic()
        rendered_at = started

        def rendered(result: RenderResult, checksum: str) -> None:
            nonlocal rendered_at
            rendered_at = self.clock.monotonic()
            self._log_new_warnings(result.warnings)
            aux = result.aux
            aux_count = sum(len(group) for group in (aux.maps, aux.files, aux.certificates, aux.crt_lists))
            self.publish(TemplateRendered(haproxy_config=result.config, content_checksum=checksum,
                                          auxiliary_file_count=aux_count, duration_s=rendered_at - started,
                                          trigger_reason=reason, coalescible=coalescible, auxiliary_files=aux),
                         cause=cause)
            self._publish_notices(result.notices, cause)

        self.renders += 1
        try:
            checked = await render_and_validate(self.ctx.engine, self.render_inputs(), self.ctx.validator,
                                                runner=self.ctx.ports.check_runner, on_rendered=rendered)
        except TemplatingError as exc:
            self.logger.error("rendering failed: %s", exc)
            self.publish(TemplateRenderFailed(template_name=str(getattr(exc, "template", "") or ""), error=str(exc)),
                         cause=cause)
            self.publish(ReconciliationFailed(error=str(exc), phase="render"), cause=cause)
            return
        result, checksum, validation = checked.render, checked.checksum, checked.validation
        done = self.clock.monotonic()
        if not validation.valid:
            errors = tuple(str(e) for e in validation.errors) or (validation.summary(),)
            self.logger.error("rendered configuration %s failed validation: %s", checksum, "; ".join(errors))
            self.publish(ValidationFailed(errors=errors, content_checksum=checksum, duration_s=done - rendered_at,
                                          trigger_reason=reason), cause=cause)
            self.publish(ReconciliationFailed(error="; ".join(errors), phase="validate"), cause=cause)
            return
        if validation.method != "haproxy -c" and not validation.cached:
            self.logger.debug("rendered configuration %s validated structurally: %s", checksum,
                              validation.structural_reason)
        self.last_rendered = result
        # The next render keeps each endpoint in the slot it has now (the config being deployed), so that
        # endpoint changes stay runtime-only for the whole life of the iteration, not just its first render.
        self.ctx.current_config = result.config
        self.publish(ValidationCompleted(content_checksum=checksum, haproxy_config=result.config,
                                         auxiliary_files=result.aux,
                                         warnings=tuple(str(w) for w in validation.warnings),
                                         duration_s=done - rendered_at, trigger_reason=reason,
                                         coalescible=coalescible, method=validation.method,
                                         statuses=result.statuses), cause=cause)
        self.publish(ReconciliationCompleted(duration_s=done - started), cause=cause)
