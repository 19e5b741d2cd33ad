"""The characters that end a line or a command, defined once for the controller and the simulator.

Every C0 and C1 control character and the Unicode line and paragraph separators (Unicode categories
Cc, Zl and Zp): everything ``str.splitlines`` splits at (\\n \\r \\v \\f \\x1c-\\x1e \\x85 U+2028 U+2029)
and more. HAProxy splits config lines at \\n and runtime-socket commands at \\n or ';', but any other
reader that splits like Python (a log viewer, a diff) would see lines HAProxy does not, so none of them
may reach a rendered value, a map entry or a runtime command.
"""

from __future__ import annotations

import re

# The body of a regular-expression character class, for patterns that forbid more than these.
CONTROL_CHARACTERS = "\x00-\x1f\x7f-\x9f\u2028\u2029"
CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")


def has_control_characters(value: str) -> bool:
    return CONTROL.search(value) is not None


def first_control_character(value: str) -> str | None:
    """The first such character of ``value`` as ``U+XXXX`` (what error messages show), or None."""
    found = CONTROL.search(value)
    return f"U+{ord(found.group()):04X}" if found else None
