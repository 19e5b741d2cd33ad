"""Regular expressions from templates and post-processors, on RE2 (``google-re2``): linear time.

Patterns come from the custom resource, i.e. from whoever may edit templates. Python's ``re``
backtracks: ``^(a|a)+$`` against 32 ``a``'s and a ``!`` runs for minutes and, since a render holds
the event loop, freezes the controller. RE2 (the engine of the Go original) matches in time linear
in the input, and refuses what it cannot do in linear time (backreferences, lookaround) at compile
time: those patterns get a clear error instead. Replacements use Go syntax (``$1``, ``${name}``,
``$$``) and are built with a running size check against ``MAX_OUTPUT_SIZE``.
The compiler itself is ``haptic.core.linear_regex`` (config validation uses it too).
Imports only it and the output caps.
"""

from __future__ import annotations

import re
from typing import Any

from haptic.core.linear_regex import PatternError, compile_pattern
from haptic.templating.output_caps import check_output_size

__all__ = ["PatternError", "Replacement", "compile_pattern", "go_replacement", "sub_capped"]

_GO_GROUP = re.compile(r"\$\$|\$\{(\w+)\}|\$(\d+)")


# A parsed replacement: literal text (str), a group number (int) or a group name (a 1-tuple).
Replacement = tuple[str | int | tuple[str], ...]


def go_replacement(replacement: str) -> Replacement:
    """Parses a Go/RE2 replacement (``$1``, ``${name}``, ``$$``) into literal text and group references.

    As in Go, a reference to a group the pattern lacks (or that did not take part) expands to nothing.
    """
    pieces: list[str | int | tuple[str]] = []
    end = 0
    for m in _GO_GROUP.finditer(replacement):
        pieces.append(replacement[end : m.start()])
        name = m.group(1) or m.group(2)
        pieces.append("$" if name is None else int(name) if name.isdigit() else (name,))
        end = m.end()
    pieces.append(replacement[end:])
    return tuple(p for p in pieces if p != "")


def _steps(compiled: Any, replacement: Replacement) -> list[str | int]:
    # Named references resolved once per call; unknown groups dropped (they expand to nothing).
    names: dict[str, int] = compiled.groupindex
    steps: list[str | int] = []
    for piece in replacement:
        index = names.get(piece[0], -1) if isinstance(piece, tuple) else piece
        if isinstance(index, str) or 0 <= index <= compiled.groups:
            steps.append(index)
    return steps


def sub_capped(compiled: Any, replacement: Replacement, text: str, what: str) -> str:
    """Replaces every match of ``compiled`` in ``text`` by the parsed Go ``replacement``.

    Stops as soon as the result, or the number of replacement steps, would exceed the size cap.
    """
    steps = _steps(compiled, replacement)
    wants_groups = any(isinstance(step, int) and step > 0 for step in steps)
    pieces: list[str] = []
    size = 0
    work = 0
    end = 0
    for match in compiled.finditer(text):
        start, stop = match.span()
        pieces.append(text[end:start])
        size += start - end
        # Group 0 and then 1..n, fetched once per match: the binding's per-group lookups are slow.
        groups = (text[start:stop], *match.groups("")) if wants_groups else (text[start:stop],)
        for step in steps:
            part = step if isinstance(step, str) else groups[step]
            size += len(part)
            pieces.append(part)
        work += len(steps) + 1
        check_output_size(max(size, work), what)
        end = stop
    check_output_size(size + len(text) - end, what)
    pieces.append(text[end:])
    return "".join(pieces)
