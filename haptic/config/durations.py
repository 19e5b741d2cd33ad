"""Go-style duration strings (``300ms``, ``2s``, ``1m30s``, ``1.5h``) as ``datetime.timedelta``.

``Duration`` is the pydantic field type: it accepts such a string, or a number of seconds, and
serializes back to the shortest equivalent string (``90s`` -> ``1m30s``), which Go parses too.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_PART_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
DURATION_PATTERN = r"^(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"


def parse_duration(text: str) -> timedelta:
    """Parses a non-negative Go duration; ``0`` alone is allowed as in Go. Raises ``ValueError``."""
    s = text.strip()
    if s == "0":
        return timedelta(0)
    if not s:
        raise ValueError("empty duration")
    if s.startswith("-"):
        raise ValueError(f"negative duration {text!r} is not allowed")
    s = s.removeprefix("+")
    pos = 0
    total_ns = 0.0
    while pos < len(s):
        m = _PART_RE.match(s, pos)
        if m is None:
            raise ValueError(f"invalid duration {text!r} (expected e.g. '500ms', '2s', '1m30s', '1h')")
        total_ns += float(m.group(1)) * _UNITS_NS[m.group(2)]
        pos = m.end()
    return timedelta(microseconds=round(total_ns / 1_000))


def format_duration(value: timedelta) -> str:
    """The shortest Go duration string for ``value`` (microsecond precision)."""
    us = round(value.total_seconds() * 1_000_000)
    if us == 0:
        return "0s"
    sign = "-" if us < 0 else ""
    us = abs(us)
    hours, rem = divmod(us, 3_600_000_000)
    minutes, rem = divmod(rem, 60_000_000)
    seconds, micro = divmod(rem, 1_000_000)
    parts = []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if seconds or (micro and (hours or minutes)):
        frac = f"{micro:06d}".rstrip("0")
        parts.append(f"{seconds}.{frac}s" if micro else f"{seconds}s")
    elif micro:
        parts.append(f"{micro // 1000}ms" if micro % 1000 == 0 else f"{micro}us")
    return sign + "".join(parts)


def _coerce(value: Any) -> Any:
    if isinstance(value, timedelta):
        if value < timedelta(0):
            raise ValueError("negative duration is not allowed")
        return value
    if isinstance(value, bool):
        raise ValueError("a duration must be a string like '2s' or a number of seconds")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("negative duration is not allowed")
        return timedelta(seconds=value)
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError("a duration must be a string like '2s' or a number of seconds")


Duration = Annotated[
    timedelta,
    BeforeValidator(_coerce),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": DURATION_PATTERN}),
]
