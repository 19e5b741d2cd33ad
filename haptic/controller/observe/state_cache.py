"""``StateCache``: the controller's state for ``/debug/vars``, kept from events (no credentials)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    ConfigValidated,
    CredentialsUpdated,
    DeploymentCompleted,
    DeploymentStarted,
    HAProxyPodsDiscovered,
    InstanceDeploymentFailed,
    ReconciliationFailed,
    ReconciliationTriggered,
    TemplateRendered,
    TemplateRenderFailed,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.core import Event, EventBus
from haptic.core.logging import apply_config_level


class StateCache(IterationComponent):
    name = "state-cache"
    subscribes = (ConfigValidated, CredentialsUpdated, TemplateRendered, TemplateRenderFailed, ReconciliationTriggered,
                  ValidationCompleted, ValidationFailed, DeploymentStarted, DeploymentCompleted,
                  InstanceDeploymentFailed, ReconciliationFailed, HAProxyPodsDiscovered)
    critical = False
    capacity = 10_000

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.config_version = ctx.config_version
        self.credentials_version = ctx.credentials_version
        self.rendered: TemplateRendered | None = None
        self.validated: ValidationCompleted | None = None
        self.pipeline: dict[str, Any] = {"last_trigger": None, "rendering": None, "validation": None,
                                         "deployment": None}
        self.error_log: dict[str, Any] = {}
        self.pods: list[str] = []

    async def handle(self, event: Event) -> None:
        when = event.timestamp
        if isinstance(event, ConfigValidated):
            self.config_version = event.version
            # As the original's StateCache: spec.logging.level takes effect on every validated config.
            apply_config_level(event.config.spec.logging.level)
        elif isinstance(event, CredentialsUpdated):
            self.credentials_version = event.secret_version
        elif isinstance(event, ReconciliationTriggered):
            self.pipeline["last_trigger"] = {"reason": event.reason, "at": when}
        elif isinstance(event, TemplateRendered):
            self.rendered = event
            self.pipeline["rendering"] = {"status": "succeeded", "checksum": event.content_checksum, "at": when}
        elif isinstance(event, TemplateRenderFailed):
            self.pipeline["rendering"] = {"status": "failed", "error": event.error, "at": when}
            self.error_log["rendering"] = {"error": event.error, "at": when}
        elif isinstance(event, ValidationCompleted):
            self.validated = event
            self.pipeline["validation"] = {"status": "succeeded", "checksum": event.content_checksum, "at": when}
        elif isinstance(event, ValidationFailed):
            self.pipeline["validation"] = {"status": "failed", "errors": list(event.errors), "at": when}
            self.error_log["validation"] = {"errors": list(event.errors), "at": when}
        elif isinstance(event, DeploymentStarted):
            self.pipeline["deployment"] = {"status": "running", "checksum": event.content_checksum, "at": when}
        elif isinstance(event, DeploymentCompleted):
            self.pipeline["deployment"] = {"status": "succeeded" if not event.failed else "failed",
                                           "checksum": event.content_checksum, "succeeded": event.succeeded,
                                           "failed": event.failed, "at": when}
        elif isinstance(event, InstanceDeploymentFailed):
            self.error_log.setdefault("deployment", {})[event.endpoint.pod_name] = {"error": event.error, "at": when}
        elif isinstance(event, ReconciliationFailed):
            self.error_log["reconciliation"] = {"phase": event.phase, "error": event.error, "at": when}
        elif isinstance(event, HAProxyPodsDiscovered):
            self.pods = [e.pod_name for e in event.endpoints]

    def vars(self) -> dict[str, Callable[[], Any]]:
        """The ``/debug/vars`` variables, each computed at request time."""
        return {
            "config": self._config,
            "credentials": lambda: {"version": self.credentials_version, "has_dataplane_creds": True},
            "rendered": self._rendered,
            "auxfiles": self._auxfiles,
            "resources": lambda: {name: len(store) for name, store in sorted(self.ctx.stores.items())},
            "pipeline": lambda: dict(self.pipeline),
            "validated": lambda: None if self.validated is None else self.validated.to_dict(),
            "errors": lambda: dict(self.error_log),
            "pods": lambda: list(self.pods),
        }

    def _config(self) -> dict[str, Any]:
        return {"name": self.ctx.config_name, "namespace": self.ctx.namespace, "version": self.config_version,
                "config": self.ctx.config.to_json()}

    def _rendered(self) -> dict[str, Any] | None:
        if self.rendered is None:
            return None
        return {"config": self.rendered.haproxy_config, "checksum": self.rendered.content_checksum,
                "size": len(self.rendered.haproxy_config), "timestamp": self.rendered.timestamp}

    def _auxfiles(self) -> dict[str, Any] | None:
        if self.rendered is None:
            return None
        aux = self.rendered.auxiliary_files
        # Certificates hold private keys: names only.
        return {"maps": dict(aux.maps), "files": dict(aux.files), "certificates": sorted(aux.certificates),
                "crt_lists": dict(aux.crt_lists),
                "summary": {"map_count": len(aux.maps), "general_count": len(aux.files) + len(aux.crt_lists),
                            "ssl_count": len(aux.certificates)}}
