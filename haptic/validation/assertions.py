"""The validationTests assertion types and their targets.

Targets: ``haproxy.cfg`` (also empty/unknown), ``map:<name>``, ``file:<name>``, ``cert:<name>``,
``crt-list:<name>`` and ``rendering_error``. Patterns are regular expressions (RE2 syntax is a subset
of Python's for the patterns configs use).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from haptic.config.models import ValidationAssertion
from haptic.core.linear_regex import PatternError, compile_pattern
from haptic.k8s.jsonpath import JSONPathError, compile_jsonpath, format_value
from haptic.templating.engine import RenderResult
from haptic.validation.haproxy_check import HAProxyValidator

RENDERING_ERROR = "rendering_error"


@dataclass(frozen=True)
class AssertionResult:
    type: str
    description: str
    target: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class AssertionInputs:
    """What an assertion looks at: the render (or its error) and ways to re-render and validate."""

    result: RenderResult | None
    rendering_error: str | None
    jsonpath_data: Mapping[str, Any]
    rerender: Callable[[], RenderResult]
    validator: HAProxyValidator


def target_text(inputs: AssertionInputs, target: str) -> tuple[str | None, str]:
    """The text an assertion targets, or ``(None, why)`` when it does not exist."""
    if target == RENDERING_ERROR:
        return inputs.rendering_error or "", ""
    result = inputs.result
    if result is None:
        return None, f"rendering failed: {inputs.rendering_error}"
    kind, sep, name = target.partition(":")
    groups = {
        "map": result.aux.maps,
        "file": result.aux.files,
        "cert": result.aux.certificates,
        "crt-list": result.aux.crt_lists,
    }
    if sep and kind in groups:
        files = groups[kind]
        if name not in files:
            return None, f"no {kind} named {name!r} (rendered: {', '.join(sorted(files)) or 'none'})"
        return files[name], ""
    return result.config, ""


def _compile(pattern: str, field: str) -> Any:
    """The pattern on RE2 (linear time: authors' patterns must not hang the webhook or the CLI), multi-line."""
    try:
        return compile_pattern(pattern, multiline=True)
    except PatternError as exc:
        raise _BadPattern(f"{field}: {exc}") from None


class _BadPattern(Exception):
    pass


def _preview(text: str, limit: int = 200) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _diff(a: str, b: str, name: str) -> str:
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), f"{name} (1st)", f"{name} (2nd)", lineterm=""))
    return "\n".join(lines[:30])


def _same_render(first: RenderResult, second: RenderResult) -> str | None:
    if first.config != second.config:
        return _diff(first.config, second.config, "haproxy.cfg")
    for kind in ("maps", "files", "certificates", "crt_lists"):
        a, b = getattr(first.aux, kind), getattr(second.aux, kind)
        if list(a) != list(b):
            return f"{kind}: file sets differ: {sorted(a)} vs {sorted(b)}"
        for name in a:
            if a[name] != b[name]:
                return _diff(a[name], b[name], f"{kind}/{name}")
    return None


def evaluate(assertion: ValidationAssertion, inputs: AssertionInputs) -> AssertionResult:
    """Evaluates one assertion; never raises for bad patterns (they fail the assertion instead)."""
    kind = assertion.type
    target = assertion.target or "haproxy.cfg"

    def done(passed: bool, message: str = "") -> AssertionResult:
        return AssertionResult(kind, assertion.description, target, passed, message)

    try:
        if kind == "haproxy_valid":
            if inputs.result is None:
                return done(False, f"rendering failed: {inputs.rendering_error}")
            check = inputs.validator.validate(inputs.result.config, inputs.result.aux)
            return done(check.valid, "" if check.valid else check.summary())
        if kind == "deterministic":
            if inputs.result is None:
                return done(False, f"rendering failed: {inputs.rendering_error}")
            difference = _same_render(inputs.result, inputs.rerender())
            return done(difference is None, difference or "")
        if kind == "jsonpath":
            found = compile_jsonpath(assertion.jsonpath).find(inputs.jsonpath_data)
            if not found:
                return done(False, f"jsonpath {assertion.jsonpath!r} matched nothing")
            value = format_value(found[0])
            if assertion.expected and value != assertion.expected:
                return done(False, f"jsonpath {assertion.jsonpath!r} is {value!r}, expected {assertion.expected!r}")
            return done(True)
        text, why = target_text(inputs, target)
        if text is None:
            return done(False, why)
        if kind == "contains":
            ok = _compile(assertion.pattern, "pattern").search(text) is not None
            return done(ok, "" if ok else f"pattern {assertion.pattern!r} not found in {target}: {_preview(text)}")
        if kind == "not_contains":
            match = _compile(assertion.pattern, "pattern").search(text)
            note = "" if match is None else f"pattern {assertion.pattern!r} found: {match.group(0)!r}"
            return done(match is None, note)
        if kind == "match_count":
            count = sum(1 for _ in _compile(assertion.pattern, "pattern").finditer(text))
            expected = int(assertion.expected)
            return done(count == expected, "" if count == expected else f"{count} matches, expected {expected}")
        if kind == "equals":
            ok = text == assertion.expected
            return done(ok, "" if ok else f"{target} is {_preview(text)!r}, expected {_preview(assertion.expected)!r}")
        if kind == "match_order":
            position = 0
            for i, pattern in enumerate(assertion.patterns):
                match = _compile(pattern, f"patterns[{i}]").search(text, position)
                if match is None:
                    return done(False, f"pattern {pattern!r} not found after position {position} in {target}")
                position = match.end()
            return done(True)
        return done(False, f"unknown assertion type {kind!r}")
    except _BadPattern as exc:
        return done(False, str(exc))
    except JSONPathError as exc:
        return done(False, str(exc))
