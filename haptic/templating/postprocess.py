"""Post-processing of rendered text: ``regex_replace`` applied line by line, in config order."""

from __future__ import annotations

from typing import Any

from haptic.templating.errors import TemplateRenderError
from haptic.templating.linear_regex import PatternError, compile_pattern, go_replacement, sub_capped
from haptic.templating.output_caps import OutputTooLarge, check_output_size

_WHAT = "postProcessing regex_replace"


class RegexReplace:
    """Replaces ``pattern`` (RE2-compatible) by ``replace`` (``$1`` groups) on every line."""

    __slots__ = ("_compiled", "_replacement", "pattern", "replace")

    def __init__(self, pattern: str, replace: str) -> None:
        self.pattern = pattern
        self.replace = replace
        self._compiled = compile_pattern(pattern)
        self._replacement = go_replacement(replace)

    def apply(self, text: str) -> str:
        compiled, replacement = self._compiled, self._replacement
        # Line by line, like the original: anchors see one line; the trailing newline is kept.
        body, newline = (text[:-1], "\n") if text.endswith("\n") else (text, "")
        lines = []
        size = 0
        try:
            for line in body.split("\n"):
                lines.append(sub_capped(compiled, replacement, line, _WHAT))
                size += len(lines[-1]) + 1
                check_output_size(size, _WHAT)
        except OutputTooLarge as exc:
            raise TemplateRenderError(str(exc)) from None
        return "\n".join(lines) + newline


def post_processor_from(spec: Any, where: str) -> RegexReplace:
    """Builds a post-processor from a ``PostProcessing``-like object or mapping (``type``, ``params``)."""
    kind = spec.get("type") if isinstance(spec, dict) else getattr(spec, "type", None)
    params = spec.get("params") if isinstance(spec, dict) else getattr(spec, "params", None)
    if kind != "regex_replace":
        raise ValueError(f"{where}.type: unsupported post-processor {kind!r} (only regex_replace)")
    if params is not None and not isinstance(params, dict):
        params = {"pattern": getattr(params, "pattern", None), "replace": getattr(params, "replace", "")}
    if not isinstance(params, dict) or not isinstance(params.get("pattern"), str):
        raise ValueError(f"{where}.params.pattern is required")
    try:
        return RegexReplace(params["pattern"], str(params.get("replace", "")))
    except PatternError as exc:
        raise ValueError(f"{where}.params.pattern: {exc}") from None
