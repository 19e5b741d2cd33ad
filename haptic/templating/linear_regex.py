"""Regular expressions from templates and post-processors, on RE2 (``google-re2``): linear time.

Patterns come from the custom resource, i.e. from whoever may edit templates. Python's ``re``
backtracks: ``^(a|a)+$`` against 32 ``a``'s and a ``!`` runs for minutes and, since a render holds
the event loop, freezes the controller. RE2 (the engine of the Go original) matches in time linear
in the input, and refuses what it cannot do in linear time (backreferences, lookaround) at compile
time: those patterns get a clear error instead. Replacements use Go syntax (``$1``, ``${name}``,
``$$``) and are built with a running size check against ``MAX_OUTPUT_SIZE``.
Imports only ``re2`` and the output caps.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

from haptic.templating.output_caps import check_output_size

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the error reaches the user through PatternError, not stderr
_GO_GROUP = re.compile(r"\$\$|\$\{(\w+)\}|\$(\d+)")


class PatternError(ValueError):
    """A pattern RE2 refuses; the message says why (unsupported construct or syntax error)."""


def _explain(pattern: str, detail: str) -> str:
    # RE2's messages name the offending operator; turn the two classic ones into advice.
    if re.search(r"invalid perl operator: \(\?(=|!|<=|<!)", detail):
        why = "lookaround ((?=...), (?!...), (?<=...), (?<!...)) is not supported by RE2, the linear-time engine"
    elif re.search(r"invalid escape sequence: \\([1-9]|k)", detail):
        why = "backreferences (\\1 ...) are not supported by RE2, the linear-time engine"
    else:
        why = f"invalid RE2 pattern ({detail})"
    return f"pattern {pattern!r}: {why}"


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 pattern; ``PatternError`` naming the reason when RE2 cannot run it."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(_explain(pattern, detail)) from None


def go_replacement(replacement: str) -> str:
    """Turns a Go/RE2 replacement (``$1``, ``${name}``, ``$$``) into a ``Match.expand`` template."""
    escaped = replacement.replace("\\", "\\\\")

    def group(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return "$" if name is None else f"\\g<{name}>"

    return _GO_GROUP.sub(group, escaped)


def sub_capped(compiled: Any, template: str, text: str, what: str) -> str:
    """``compiled.sub(template, text)`` that stops as soon as the result would exceed the size cap."""
    pieces: list[str] = []
    size = 0
    end = 0
    try:
        for match in compiled.finditer(text):
            start = match.start()
            piece: str = match.expand(template)
            size += start - end + len(piece)
            check_output_size(size, what)
            pieces.append(text[end:start])
            pieces.append(piece)
            end = match.end()
    except IndexError:
        raise PatternError(f"replacement refers to a group the pattern {compiled.pattern!r} does not have") from None
    check_output_size(size + len(text) - end, what)
    pieces.append(text[end:])
    return "".join(pieces)
