"""``ConfigStatusWriter`` (leader-only): the HAProxyTemplateConfig's status.

``Valid`` once a config was loaded and its render passed ``haproxy -c``; ``Invalid`` with the
reasons when a new generation fails validation (the previous iteration keeps running) or a render
fails ``haproxy -c`` (the last good config stays deployed). Sets ``observedGeneration`` and a
``Valid`` condition; writes only when something changed.
"""

from __future__ import annotations

import contextlib

from haptic.controller.component import IterationComponent
from haptic.controller.context import TEMPLATE_CONFIGS, IterationContext
from haptic.controller.events import ConfigInvalid, ConfigValidated, ValidationCompleted, ValidationFailed
from haptic.core import Event, EventBus
from haptic.k8s.api import JSON, ApiError, KubeAPI


class ConfigStatusWriter(IterationComponent):
    name = "status-writer"
    subscribes = (ConfigValidated, ConfigInvalid, ValidationCompleted, ValidationFailed)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.written: tuple[str, str, int | None] | None = None
        #: A newer generation was rejected: render results of the running (older) one do not make it Valid.
        self.rejected_generation: int | None = None
        self.writes = 0

    async def handle(self, event: Event) -> None:
        generation = self.ctx.generation
        if isinstance(event, ConfigInvalid):
            gen = int(event.version) if event.version.isdigit() else generation
            self.rejected_generation = gen
            errors = [e for group in event.errors.values() for e in group]
            await self._write("Invalid", "configuration rejected: " + "; ".join(errors), errors, gen)
        elif isinstance(event, ConfigValidated):
            # A newer generation is reported on by the next iteration.
            if event.version == self.ctx.config_version and self.rejected_generation is None:
                await self._write("Valid", "configuration loaded", [], generation)
        elif isinstance(event, ValidationFailed):
            if self.rejected_generation is None:
                await self._write("Invalid", "rendered configuration failed validation: " + "; ".join(event.errors),
                                  list(event.errors), generation)
        elif isinstance(event, ValidationCompleted) and self.rejected_generation is None:
            await self._write("Valid", "rendered configuration passed validation", [], generation)

    async def _write(self, state: str, message: str, errors: list[str], generation: int | None) -> None:
        key = (state, message, generation)
        if key == self.written:
            return
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        condition: JSON = {"type": "Valid", "status": "True" if state == "Valid" else "False",
                           "reason": "Valid" if state == "Valid" else "Invalid", "message": message,
                           "lastTransitionTime": now}
        if generation is not None:
            condition["observedGeneration"] = generation
        status: JSON = {"validationStatus": state, "validationMessage": message, "validationErrors": errors,
                        "lastValidated": now, "conditions": [condition]}
        if generation is not None:
            status["observedGeneration"] = generation
        try:
            await self.ctx.ports.kube.patch(TEMPLATE_CONFIGS, self.ctx.config_name, {"status": status}, "merge",
                                            namespace=self.ctx.namespace, subresource="status")
        except ApiError as exc:
            self.logger.warning("status of HAProxyTemplateConfig %s not written: %s", self.ctx.config_name, exc)
            return
        self.written = key
        self.writes += 1


async def write_invalid_status(kube: KubeAPI, namespace: str, name: str, errors: list[str], generation: int | None,
                               now: str) -> None:
    """Marks a config Invalid before any iteration exists (used by the loop while waiting for a good one)."""
    message = "configuration rejected: " + "; ".join(errors)
    condition: JSON = {"type": "Valid", "status": "False", "reason": "Invalid", "message": message,
                       "lastTransitionTime": now}
    status: JSON = {"validationStatus": "Invalid", "validationMessage": message, "validationErrors": errors,
                    "lastValidated": now, "conditions": [condition]}
    if generation is not None:
        status["observedGeneration"] = generation
        condition["observedGeneration"] = generation
    with contextlib.suppress(ApiError):
        await kube.patch(TEMPLATE_CONFIGS, name, {"status": status}, "merge", namespace=namespace,
                             subresource="status")
