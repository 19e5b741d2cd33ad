"""``render_and_validate``: render the templates, then validate the result with ``haproxy -c``.

The one render-then-validate sequence, shared by the controller's coordinator (live stores) and the
admission webhook's dry-run check (stores with the proposed change). Pure: the caller hands in the
engine, the inputs, the validator and the command runner; it knows no event bus and reads no clock
(``on_rendered`` lets the caller time and announce the render before validation starts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.planner import parsed, plan
from haptic.dataplane.runtime_growth import needs_reload
from haptic.templating.current_config import CurrentConfig
from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine
from haptic.validation.checksum import content_checksum
from haptic.validation.haproxy_check import HAProxyValidator, ValidationResult
from haptic.validation.process import AsyncCommandRunner
from haptic.validation.render_runner import InlineRenderRunner, RenderRunner

__all__ = ["CheckedRender", "render_and_validate"]

_INLINE = InlineRenderRunner()


@dataclass(frozen=True)
class CheckedRender:
    """A render, its content checksum and what validation said of it."""

    render: RenderResult
    checksum: str
    validation: ValidationResult

    @property
    def valid(self) -> bool:
        return self.validation.valid


async def render_and_validate(
    engine: TemplateEngine,
    inputs: RenderInputs,
    validator: HAProxyValidator,
    *,
    runner: AsyncCommandRunner,
    on_rendered: Callable[[RenderResult, str], None] | None = None,
    render_runner: RenderRunner | None = None,
) -> CheckedRender:
    """Renders ``inputs`` (through ``render_runner``: default inline) and validates the result. A failed
    render raises ``TemplatingError``; ``on_rendered(result, checksum)`` is called between rendering and
    validation."""
    renders = render_runner or _INLINE
    result = await renders.render(engine, inputs)
    if result.slots_shrinkable and not inputs.compact_slots and reloads_anyway(inputs.current_config, result.config):
        # Surplus server slots go back only at a reload that happens anyway: shrinking is free then.
        result = await renders.render(engine, replace(inputs, compact_slots=True))
    checksum = content_checksum(result.config, result.aux)
    if on_rendered is not None:
        on_rendered(result, checksum)
    validation = await validator.avalidate(result.config, result.aux, runner=runner, checksum=checksum)
    return CheckedRender(result, checksum, validation)


def reloads_anyway(current: object, desired: str) -> bool:
    """Whether deploying ``desired`` over the ``current`` config (its text, or a ``CurrentConfig``) needs a
    reload. Server slots that grow through the runtime API do not. False when there is no current text to
    compare with, or either side does not parse: nothing is known then."""
    text = current.text if isinstance(current, CurrentConfig) else current
    if not isinstance(text, str) or not text or text.isspace():  # (``strip()`` would copy the text)
        return False
    try:
        return needs_reload(plan(text, desired), parsed(desired))
    except ConfigParseError:
        return False
