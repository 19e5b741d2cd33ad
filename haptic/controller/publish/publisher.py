"""``ConfigPublisher`` (leader-only): publishes what was rendered and deployed as a ``HAProxyCfg``.

``<config>-haproxycfg`` in the controller's namespace, owned by the HAProxyTemplateConfig: ``spec``
holds the validated config (zstd-compressed and base64-encoded above ``compressionThreshold``) and its
checksum; ``status.deployedToPods`` one entry per pod (checksum, reload, errors); the last validation
failure is recorded apart (``status.validationError``) and never replaces the published content.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import HAPROXY_CFGS, IterationContext
from haptic.controller.events import (
    ConfigAppliedToPod,
    ConfigPublished,
    HAProxyPodsDiscovered,
    HAProxyPodTerminated,
    LostLeadership,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.controller.publish.aux_publisher import AuxFilePublisher
from haptic.controller.publish.content import encode_config
from haptic.core import Event, EventBus
from haptic.core.utf8 import utf8_size
from haptic.k8s.api import JSON, ApiError, NotFound
from haptic.names import TEMPLATE_CONFIG_LABEL


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class ConfigPublisher(IterationComponent):
    name = "config-publisher"
    subscribes = (ValidationCompleted, ValidationFailed, ConfigAppliedToPod, HAProxyPodTerminated,
                  HAProxyPodsDiscovered, LostLeadership)
    leader_only = True
    capacity = 1000

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.aux = AuxFilePublisher(ctx.ports.kube, ctx.namespace, ctx.runtime_config_name, self.logger)
        self._reset()

    def _reset(self) -> None:
        self.published_checksum: str | None = None
        self.pods: dict[str, dict[str, Any]] = {}
        self.validation_error: str | None = None
        self.meta: dict[str, Any] = {}
        self.conditions: dict[str, JSON] = {}
        self.aux_refs: dict[str, list[JSON]] | None = None
        self.aux.forget()
        self._dirty = False
        self.writes = 0

    async def on_stop(self) -> None:
        self._reset()

    async def handle(self, event: Event) -> None:
        try:
            await self._handle(event)
        except ApiError as exc:
            self.logger.warning("publishing %s failed: %s", self.ctx.runtime_config_name, exc)
            return
        assert self.subscription is not None
        if self._dirty and self.subscription.queued == 0:
            await self._write_status()

    async def _handle(self, event: Event) -> None:
        if isinstance(event, ValidationCompleted):
            if self.validation_error is not None:
                self.validation_error = None
                self._dirty = True
            if event.content_checksum != self.published_checksum:
                await self._publish_spec(event)
        elif isinstance(event, ValidationFailed):
            self.validation_error = "\n".join(event.errors)
            self._dirty = True
        elif isinstance(event, ConfigAppliedToPod):
            entry = self.pods.setdefault(event.pod_name, {"podName": event.pod_name, "consecutiveErrors": 0})
            now = _time(self.clock.now())
            sync = event.sync
            entry.update({"syncDuration": f"{sync.sync_duration_s:.3f}s",
                          "versionConflictRetries": sync.version_conflict_retries,
                          "fallbackUsed": sync.fallback_used,
                          "lastOperationSummary": dict(sync.operation_counts) or None})
            if event.sync.error:
                entry["lastError"] = event.sync.error
                entry["lastErrorAt"] = now
                entry["consecutiveErrors"] = int(entry.get("consecutiveErrors") or 0) + 1
            else:
                entry.update({"checksum": event.checksum, "deployedAt": now, "consecutiveErrors": 0,
                              "lastError": None, "lastErrorAt": None})
                if event.sync.reload_triggered:
                    entry["lastReloadAt"] = now
                    entry["lastReloadID"] = event.sync.reload_id or None
            self._dirty = True
        elif isinstance(event, HAProxyPodTerminated):
            if self.pods.pop(event.pod_name, None) is not None:
                self._dirty = True
        elif isinstance(event, HAProxyPodsDiscovered):
            names = {e.pod_name for e in event.endpoints}
            for name in [n for n in self.pods if n not in names]:
                del self.pods[name]
                self._dirty = True
        elif isinstance(event, LostLeadership):
            self._reset()

    async def _publish_spec(self, rendered: ValidationCompleted) -> None:
        threshold = self.ctx.spec.controller.config_publishing.compression_threshold
        content, compressed = encode_config(rendered.haproxy_config, threshold)
        spec = {"path": self.ctx.spec.dataplane.config_file, "content": content, "checksum": rendered.content_checksum,
                "compressed": compressed}
        kube = self.ctx.ports.kube
        name, namespace = self.ctx.runtime_config_name, self.ctx.namespace
        try:
            stored = await kube.patch(HAPROXY_CFGS, name, {"spec": spec}, "merge", namespace=namespace)
        except NotFound:
            meta: JSON = {"name": name, "namespace": namespace, "labels": {TEMPLATE_CONFIG_LABEL: self.ctx.config_name}}
            uid = self.ctx.config.metadata.uid
            if uid:
                meta["ownerReferences"] = [{"apiVersion": self.ctx.config.api_version, "kind": self.ctx.config.kind,
                                            "name": self.ctx.config_name, "uid": uid, "controller": True}]
            stored = await kube.create(HAPROXY_CFGS, {"apiVersion": HAPROXY_CFGS.api_version, "kind": "HAProxyCfg",
                                                      "metadata": meta, "spec": spec}, namespace=namespace)
        self.writes += 1
        self.published_checksum = rendered.content_checksum
        aux = rendered.auxiliary_files
        owner_uid = str((stored.get("metadata") or {}).get("uid") or "")
        owner = {"apiVersion": HAPROXY_CFGS.api_version, "kind": "HAProxyCfg", "name": name,
                 "uid": owner_uid} if owner_uid else None
        try:
            self.aux_refs = await self.aux.publish(aux, self.ctx.dirs, threshold, owner)
        except ApiError as exc:
            # The HAProxyCfg is what the pods' state is read from; its files are a convenience copy.
            self.logger.warning("auxiliary files of %s not published: %s", name, exc)
            self.aux.forget()
        size = utf8_size(rendered.haproxy_config)
        total = size + sum(utf8_size(v) for group in (aux.maps, aux.files, aux.certificates, aux.crt_lists)
                           for v in group.values())
        now = _time(self.clock.now())
        self.meta = {"contentSize": size, "totalSize": total, "renderedAt": now, "validatedAt": now}
        self._dirty = True
        self.publish(ConfigPublished(runtime_config_name=name, runtime_config_namespace=namespace,
                                     map_file_count=len(aux.maps), secret_count=len(aux.certificates)))

    def _conditions(self, pods: list[dict[str, Any]]) -> list[JSON]:
        """``Synced``: every pod runs the published config; ``Valid``: the latest render passed validation.
        A condition's ``lastTransitionTime`` moves only when its status does."""
        failing = sorted(p["podName"] for p in pods if int(p.get("consecutiveErrors") or 0) > 0)
        behind = sorted(p["podName"] for p in pods if p.get("checksum") != self.published_checksum)
        if not pods:
            synced = ("False", "NoPods", "no HAProxy pod has been deployed to yet")
        elif failing:
            synced = ("False", "DeploymentFailed", f"deployment failing on {', '.join(failing)}")
        elif behind:
            synced = ("False", "Pending", f"not yet on the published config: {', '.join(behind)}")
        else:
            synced = ("True", "AllPodsSynced", f"{len(pods)} pod(s) run the published config")
        valid = (("False", "ValidationFailed", (self.validation_error or "").splitlines()[0][:300])
                 if self.validation_error else ("True", "Validated", "the latest render passed validation"))
        now = _time(self.clock.now())
        conditions: list[JSON] = []
        for kind, (status, reason, message) in (("Synced", synced), ("Valid", valid)):
            previous = self.conditions.get(kind)
            since = previous["lastTransitionTime"] if previous and previous["status"] == status else now
            condition = {"type": kind, "status": status, "reason": reason, "message": message,
                         "lastTransitionTime": since, "observedGeneration": self.ctx.generation}
            self.conditions[kind] = condition
            conditions.append(condition)
        return conditions

    async def _write_status(self) -> None:
        self._dirty = False
        pods = [{k: v for k, v in self.pods[n].items() if v is not None} for n in sorted(self.pods)]
        status: JSON = {"deployedToPods": pods, "metadata": self.meta, "validationError": self.validation_error,
                        "observedGeneration": self.ctx.generation, "conditions": self._conditions(pods)}
        if self.aux_refs is not None:
            status["auxiliaryFiles"] = self.aux_refs
        try:
            await self.ctx.ports.kube.patch(HAPROXY_CFGS, self.ctx.runtime_config_name, {"status": status}, "merge",
                                            namespace=self.ctx.namespace, subresource="status")
            self.writes += 1
        except NotFound:
            pass  # nothing published yet: the status follows the first publication
        except ApiError as exc:
            self._dirty = True
            self.logger.warning("status of %s not written: %s", self.ctx.runtime_config_name, exc)
