"""``RenderValidateCoordinator`` (leader-only): render the templates against the live stores, then
validate the result with ``haproxy -c``.

Queued triggers are folded into one run ("latest wins"); a drift-prevention trigger keeps its reason
so that the scheduler forces the deployment. A render or validation failure is published and counted
and nothing else happens: the last good config stays deployed.

When ``haproxy -c`` rejects a render, the objects changed since the last config that validated are
searched for the culprits (``haptic.validation.isolation``): they are left out (a ``resource.excluded``
with reason ``RejectedByHAProxy``, as long as the object is unchanged) and everyone else's changes are
validated and deployed. Only when no object is to blame does the validation failure stand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
from haptic.controller.reconcile.http_content import HttpContentGate
from haptic.controller.reconcile.notice_tracker import NoticeTracker
from haptic.controller.reconcile.watched_objects import ObjectKey, StorePart, WatchedObjects
from haptic.core import Event, EventBus
from haptic.names import HAPROXY_PODS
from haptic.templating.current_config_cache import CurrentConfigCache
from haptic.templating.engine import RenderInputs, RenderResult
from haptic.templating.errors import TemplatingError
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.validation.isolation import Culprit, content_fingerprint, isolate_rejected
from haptic.validation.isolation import change_order as _change_order
from haptic.validation.isolation import resource_version as _version
from haptic.validation.render_check import CheckedRender, render_and_validate


def _key_of(obj: Mapping[str, Any]) -> ObjectKey | None:
    ref = object_ref(obj)
    return ref.key if ref is not None else None


def _listed_now(store: Any) -> Callable[[], Sequence[Mapping[str, Any]]]:
    objects = tuple(store.list())
    return lambda: objects


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
        #: every watched object as the last config that validated rendered it (None: none has validated yet)
        self._last_good: WatchedObjects | None = None
        #: changes held back after haproxy -c rejected their lines: key -> (the rejected content's fingerprint,
        #: why, the version rendered instead or None for a new object, which is left out)
        self.isolated: dict[ObjectKey, tuple[str, Culprit, Mapping[str, Any] | None]] = {}
        #: per store: (store, its change mark, its objects by key, id -> (object, key)) as the last ``_objects`` saw
        #: them (each entry holds its object: no id reuse); a store not written since is not listed again
        self._object_parts: dict[str, tuple[Any, Any, StorePart]] = {}
        #: reports to the iteration's ``HttpContentRefresher.report`` (logs and publishes content changes)
        self.http_gate = HttpContentGate(ctx.http, lambda changes: None)

    def _objects(self) -> WatchedObjects:
        """Every watched object (HAProxy pods aside) by (kind, namespace, name)."""
        parts: dict[str, tuple[Any, Any, StorePart]] = {}
        for name, store in sorted(self.ctx.stores.items()):
            if name == HAPROXY_PODS:
                continue
            last = self._object_parts.get(name)
            mark = store.change_mark()
            if last is not None and last[0] is store and store.unchanged_since(last[1]):
                part = last[2]  # not written since: the same objects
            else:
                # taken as the store holds them now, keyed when first read (most renders' views are never read)
                listed = getattr(store, "listed_later", None)
                part = StorePart(listed() if listed is not None else _listed_now(store),
                                 last[2].known if last is not None else {}, _key_of)
            parts[name] = (store, mark, part)
        self._object_parts = parts
        return WatchedObjects(tuple(p[2] for p in parts.values()))

    def _still_isolated(self, objects: Mapping[ObjectKey, Mapping[str, Any]]) -> frozenset[ObjectKey]:
        """Drops isolations of objects that changed or went (they get another try); the keys left."""
        for key in list(self.isolated):
            obj = objects.get(key)
            if obj is None or content_fingerprint(obj) != self.isolated[key][0]:
                del self.isolated[key]
        return frozenset(self.isolated)

    def _candidates(self, objects: Mapping[ObjectKey, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The objects changed since the last config that validated, oldest change first."""
        previous: Mapping[ObjectKey, Mapping[str, Any]] = self._last_good or {}
        changed = [obj for key, obj in objects.items()
                   if key not in self.isolated and (key not in previous or _version(previous[key]) != _version(obj))]
        return sorted(changed, key=_change_order)

    def render_inputs(self) -> RenderInputs:
        stores = {name: store for name, store in self.ctx.stores.items() if name != HAPROXY_PODS}
        return RenderInputs(
            stores=stores,
            haproxy_pods=self.ctx.stores.get(HAPROXY_PODS),
            extra_context=self.ctx.spec.templating_settings.extra_context,
            current_config=self._deployed.read(self.ctx.current_config),
            dirs=self.ctx.dirs,
            capabilities=self.ctx.capabilities,
            skip=self._still_isolated(self._objects()) if self.isolated else frozenset(),
            previous={key: old for key, (_, _, old) in self.isolated.items() if old is not None},
            wall_time=self.clock.wall(),
            publish_address=self.ctx.ports.publish_address,
            http=self.ctx.http.view(proposal=False) if self.ctx.http is not None else None,
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

        def timed(result: RenderResult, checksum: str) -> None:
            nonlocal rendered_at
            rendered_at = self.clock.monotonic()

        def rendered(result: RenderResult, checksum: str) -> None:
            self._log_new_warnings(result.warnings)
            aux = result.aux
            aux_count = sum(len(group) for group in (aux.maps, aux.files, aux.certificates, aux.crt_lists))
            self.publish(TemplateRendered(haproxy_config=result.config, content_checksum=checksum,
                                          auxiliary_file_count=aux_count, duration_s=rendered_at - started,
                                          trigger_reason=reason, coalescible=coalescible, auxiliary_files=aux),
                         cause=cause)
            isolated = tuple(culprit.notice() for _, culprit, _ in self.isolated.values())
            self._publish_notices(tuple(sorted(result.notices + isolated)), cause)

        objects = self._objects()
        inputs = self.render_inputs()
        self.renders += 1
        try:
            async def attempt(inputs: RenderInputs) -> CheckedRender:
                checked = await render_and_validate(self.ctx.engine, inputs, self.ctx.validator,
                                                    runner=self.ctx.ports.check_runner, on_rendered=timed,
                                                    render_runner=self.ctx.ports.render_runner)
                if not checked.valid:
                    checked = await self._isolate(inputs, checked, objects)
                return checked

            checked = await self.http_gate.render(inputs, attempt)
        except TemplatingError as exc:
            self.logger.error("rendering failed: %s", exc)
            self.publish(TemplateRenderFailed(template_name=str(getattr(exc, "template", "") or ""), error=str(exc)),
                         cause=cause)
            self.publish(ReconciliationFailed(error=str(exc), phase="render"), cause=cause)
            return
        rendered(checked.render, checked.checksum)
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
        self._last_good = objects.with_overrides({key: old for key, (_, _, old) in self.isolated.items()})
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

    async def _isolate(self, inputs: RenderInputs, failed: CheckedRender,
                       objects: Mapping[ObjectKey, Mapping[str, Any]]) -> CheckedRender:
        """``failed`` without the objects haproxy -c rejected (recorded in ``isolated``), or ``failed``."""
        candidates = self._candidates(objects)
        if not candidates:
            return failed
        isolation = await isolate_rejected(self.ctx.engine, inputs, self.ctx.validator,
                                           runner=self.ctx.ports.check_runner, failed=failed, candidates=candidates,
                                           last_good=self._last_good, others=list(objects.values()),
                                           render_runner=self.ctx.ports.render_runner)
        self.renders += isolation.attempts if isolation is not None else 0
        if isolation is None:
            self.logger.info("validation failure not caused by one of the %d changed objects", len(candidates))
            return failed
        for culprit in isolation.culprits:
            key = culprit.ref.key
            fingerprint = content_fingerprint(objects[key])
            old = self._last_good.get(key) if self._last_good is not None else None
            if old is not None and content_fingerprint(old) == fingerprint:
                # Present, unchanged, in the last config that validated, but not rendered then (nothing used
                # it yet): it is no good version of itself, so it is left out, not rendered in its own place.
                old = None
            self.isolated[key] = (fingerprint, culprit, old)
            self.logger.warning("excluding %s: %s", culprit.ref, culprit.message)
        return isolation.checked
