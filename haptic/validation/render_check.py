"""``render_and_validate``: render the templates, then validate the result with ``haproxy -c``.

The one render-then-validate sequence, shared by the controller's coordinator (live stores) and the
admission webhook's dry-run check (stores with the proposed change). Pure: the caller hands in the
engine, the inputs, the validator and the command runner; it knows no event bus and reads no clock
(``on_rendered`` lets the caller time and announce the render before validation starts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
    result = await (render_runner or _INLINE).render(engine, inputs)
    checksum = content_checksum(result.config, result.aux)
    if on_rendered is not None:
        on_rendered(result, checksum)
    validation = await validator.avalidate(result.config, result.aux, runner=runner)
    return CheckedRender(result, checksum, validation)
