"""Linear-time regular expressions (RE2 through ``google-re2``) for every pattern users write.

Patterns come from the custom resource (templates, ``postProcessing``, ``validationTests``): from whoever
may edit it. Python's ``re`` backtracks (``^(a|a)+$`` on 32 ``a``'s and a ``!`` runs for minutes, holding
the event loop); RE2, the engine of the Go original, matches in time linear in the input and refuses at
compile time what it cannot do so (backreferences, lookaround), with a message saying which construct.
Imports only ``re`` and ``re2``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

__all__ = ["PatternError", "compile_pattern"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the error reaches the user through PatternError, not stderr


class PatternError(ValueError):
    """A pattern RE2 refuses; the message says why (unsupported construct or syntax error)."""


def _explain(pattern: str, detail: str) -> str:
    # RE2's messages name the offending operator; turn the two classic ones into advice.
    if re.search(r"invalid perl operator: \(\?(=|!|<=|<!)", detail):
        why = "lookaround ((?=...), (?!...), (?<=...), (?<!...)) is not supported by RE2, the linear-time engine"
    elif re.search(r"invalid escape sequence: \\([1-9]|k)", detail):
        why = "backreferences (\\1 ...) are not supported by RE2, the linear-time engine"
    else:
        why = f"invalid regex for RE2 ({detail})"
    return f"pattern {pattern!r}: {why}"


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, *, multiline: bool = False) -> Any:
    """The compiled RE2 pattern; ``PatternError`` naming the reason when RE2 cannot run it. ``multiline``:
    ``^``/``$`` match at every line. Other flags go inline (``(?i)``, ``(?s)``)."""
    try:
        return re2.compile(("(?m)" if multiline else "") + pattern, options=_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(_explain(pattern, detail.replace("(?m)" + pattern, pattern))) from None
