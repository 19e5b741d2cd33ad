"""``IterationComponent``: the base of the components that work on one iteration's context.

Holds the ``IterationContext`` and a logger named after the component (per replica). Components
that do not need the context (commentator, metrics, index tracker) derive from ``Component``.
"""

from __future__ import annotations

from haptic.controller.context import IterationContext
from haptic.core import Component, EventBus

__all__ = ["IterationComponent"]


class IterationComponent(Component):
    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus)
        self.ctx = ctx
        self.logger = ctx.logger(self.name)
