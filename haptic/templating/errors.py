"""Errors raised while compiling or rendering templates, each naming the template and line."""

from __future__ import annotations


class TemplatingError(Exception):
    """Base class: ``template`` is the template's name (e.g. ``haproxy.cfg``, ``map:host.map``)."""

    def __init__(
        self, message: str, *, template: str | None = None, line: int | None = None, field: str | None = None
    ) -> None:
        self.message = message
        self.template = template
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.template:
            where = f"template {self.template!r}"
            if self.line:
                where += f" line {self.line}"
            if self.field:
                where += f" (spec.{self.field})"
            where += ": "
        return where + self.message


class TemplateCompileError(TemplatingError):
    """A template failed to compile: syntax error, unknown filter or test, missing include."""


class TemplateRenderError(TemplatingError):
    """Rendering raised: a runtime error, an undefined variable or a failed sandbox check."""


class TemplateFailure(TemplateRenderError):
    """The template itself called ``fail(message)``."""


class SandboxViolation(TemplateRenderError):
    """The template tried to reach something the sandbox forbids (private attributes, unsafe calls)."""


class RenderTimeout(TemplateRenderError):
    """Rendering took longer than the configured render timeout."""
