"""``IterationValidators``: the admission validator that follows the controller's current iteration.

The webhook server lives as long as the process; configurations come and go with iterations. Used as
``AdmissionHandler(source=IterationValidators(controller))``, every review asks for the validator of
the iteration running now: built on first use from that iteration's config and live stores (so a
reinitialization swaps it), and ``None`` (reviews fail open) while there is no iteration or its
watchers have not finished their initial sync, when a partial store would deny valid objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haptic.controller.admission import DEFAULT_TIMEOUT, AdmissionValidator
from haptic.controller.proposal_check import admission_validator

if TYPE_CHECKING:
    from haptic.controller.context import IterationContext
    from haptic.controller.controller import Controller


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
                ctx.spec, ctx.stores, ctx.ports.haproxy_binary, timeout=self.timeout, runner=ctx.ports.check_runner
            )
            self._ctx = ctx
            self.built += 1
        return self._validator
