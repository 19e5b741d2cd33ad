"""``IterationValidators``: the admission validator that follows the controller's current iteration.

The webhook server lives as long as the process; configurations come and go with iterations. Used as
``AdmissionHandler(source=IterationValidators(controller))``, every review asks for the validator of
the iteration running now: built on first use from that iteration's config and live stores (so a
reinitialization swaps it), and ``None`` (reviews fail open) while there is no iteration or its
watchers have not finished their initial sync, when a partial store would deny valid objects.

``decision_events`` turns an ``AdmissionDecision`` of the pure ``haptic.webhook`` package into domain
events (the webhook package knows no event bus).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.controller.events import (
    WebhookValidationAllowed,
    WebhookValidationDenied,
    WebhookValidationError,
    WebhookValidationRequest,
)
from haptic.controller.watch.config_tests import validation_test_failures
from haptic.core import Event
from haptic.webhook.admission import DEFAULT_TIMEOUT, AdmissionDecision, AdmissionValidator, ConfigCheck, ConfigVerdict
from haptic.webhook.config_check import review_config
from haptic.webhook.proposal_check import DryRunCheck, admission_validator

if TYPE_CHECKING:
    from haptic.controller.context import IterationContext
    from haptic.controller.loop.controller import Controller


class IterationValidators:
    """A ``source`` for ``AdmissionHandler``: the current iteration's validator, or ``None``."""

    def __init__(self, controller: Controller, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.controller = controller
        self.timeout = timeout
        self.built = 0
        self._ctx: IterationContext | None = None
        self._validator: AdmissionValidator | None = None

    def __call__(self) -> AdmissionValidator | None:
        iteration = self.controller.iteration
        if iteration is None or not all(w.synced.is_set() for w in iteration.watchers):
            return None
        ctx = iteration.ctx
        if ctx is not self._ctx or self._validator is None:
            self._validator = admission_validator(
                ctx.spec, ctx.stores, ctx.ports.haproxy_binary, timeout=self.timeout, runner=ctx.ports.check_runner,
                wall_clock=ctx.ports.clock.wall, render_runner=ctx.ports.webhook_render_runner, http=ctx.http,
            )
            self._validator.config_target = (ctx.namespace, ctx.config_name)
            self._validator.config_check = _config_check(ctx, self._validator, self.timeout)
            self._ctx = ctx
            self.built += 1
        return self._validator


def _config_check(ctx: IterationContext, validator: AdmissionValidator, timeout: float) -> ConfigCheck:
    """Reviews a proposed generation of the controller's own config against this iteration's stores."""
    current = validator.check if isinstance(validator.check, DryRunCheck) else None

    def make_check(spec: HAProxyTemplateConfigSpec) -> DryRunCheck:
        return DryRunCheck.from_spec(spec, ctx.ports.haproxy_binary, timeout=timeout, runner=ctx.ports.check_runner,
                                     capabilities=ctx.capabilities, wall_clock=ctx.ports.clock.wall,
                                     render_runner=ctx.ports.webhook_render_runner, http=ctx.http)

    async def run_tests(spec: HAProxyTemplateConfigSpec) -> list[str]:
        return await validation_test_failures(spec, ctx.ports, ctx.capabilities)

    async def check(obj: Mapping[str, Any]) -> ConfigVerdict:
        return await review_config(obj, ctx.stores, make_check, run_tests, current)

    return check


def decision_events(decision: AdmissionDecision) -> tuple[Event, ...]:
    """The domain events of one decision (request, then allowed/denied/error), for the event bus."""
    uid, kind, name, namespace = decision.uid, decision.kind, decision.name, decision.namespace
    request = WebhookValidationRequest(
        request_uid=uid, kind=kind, name=name, namespace=namespace, operation=decision.operation
    )
    outcome: Event
    if decision.result == "allowed":
        outcome = WebhookValidationAllowed(request_uid=uid, kind=kind, name=name, namespace=namespace)
    elif decision.result == "denied":
        outcome = WebhookValidationDenied(
            request_uid=uid, kind=kind, name=name, namespace=namespace, reason=decision.message
        )
    else:
        outcome = WebhookValidationError(
            request_uid=uid, kind=kind, name=name, namespace=namespace, error=decision.message
        )
    return (request, outcome)


def publishing_observer(publish: Callable[[Event], object]) -> Callable[[AdmissionDecision], None]:
    """An ``AdmissionHandler`` observer that publishes each decision's events (e.g. ``bus.publish``)."""

    def observe(decision: AdmissionDecision) -> None:
        for event in decision_events(decision):
            publish(event)

    return observe
