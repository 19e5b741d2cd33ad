"""Template functions of the original (Scriggo built-ins) that Jinja2 has no equivalent for.

Hashing (``sha1``, ``sha256``, ``md5``, ``hmac_sha1``/``hmac_sha256``), ``hex``, Go-style
``sprintf``/``sprint``, and time: ``now()`` (the render's clock, never the host's), ``unix_time``,
``parse_time`` and ``format_time`` with Go reference layouts (``2006-01-02T15:04:05Z07:00``).
The original's camelCase names (``hmacSHA256``, ``unixTime``, ``parseTime``) are aliases.

Every function is deterministic and bounded: format widths and precisions are capped, results
longer than ``MAX_OUTPUT`` characters are refused, and time never comes from ``datetime.now()``:
``now()`` reads the wall time ``TemplateEngine.render`` was handed (``RenderInputs.wall_time``).
``sha256``/``md5`` are the filters of ``filters``, also offered as functions (``sha256(x)``).
Imports nothing from ``haptic`` but the templating errors, filters and render state.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Final

from haptic.templating import fragments
from haptic.templating.context import current_render
from haptic.templating.errors import TemplateFailure
from haptic.templating.filters import md5, sha256

MAX_OUTPUT: Final = 1_000_000
"""Longest string ``sprintf``/``hex``/``format_time`` may return."""
_MAX_WIDTH: Final = 1000

# -- hashing -------------------------------------------------------------------------------------


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def sha1(value: Any) -> str:
    """Hex SHA-1 of the string's UTF-8 bytes (not for security: for stable identifiers)."""
    return hashlib.sha1(_bytes(value), usedforsecurity=False).hexdigest()


def hmac_sha1(message: Any, key: Any) -> str:
    """Hex HMAC-SHA1 of ``message`` with ``key`` (argument order of the original's ``hmacSHA1``)."""
    return hmac.new(_bytes(key), _bytes(message), hashlib.sha1).hexdigest()


def hmac_sha256(message: Any, key: Any) -> str:
    return hmac.new(_bytes(key), _bytes(message), hashlib.sha256).hexdigest()


def hex_encode(value: Any) -> str:
    """Lowercase hex: of an integer's value (``255`` → ``ff``), else of the string's UTF-8 bytes."""
    if isinstance(value, bool):
        raise ValueError("hex: expected a string or an integer, got a boolean")
    if isinstance(value, int):
        return format(value, "x") if value >= 0 else "-" + format(-value, "x")
    data = _bytes(value)
    _check_output(2 * len(data), "hex")
    return data.hex()


# -- sprintf -------------------------------------------------------------------------------------

_VERB = re.compile(r"%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def _check_output(size: int, what: str) -> None:
    if size > MAX_OUTPUT:
        raise ValueError(f"{what}: result of {size} characters is larger than {MAX_OUTPUT}")


def _go_value(value: Any) -> str:
    # %v of the original: booleans and nil spelled as Go does.
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + " ".join(_go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = " ".join(f"{_go_value(k)}:{_go_value(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
        return "map[" + inner + "]"
    return str(value)


def _quote(value: Any) -> str:
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + escaped.replace("\r", "\\r") + '"'


def _pad(body: str, flags: str, width: str | None, numeric_prefix: int = 0) -> str:
    # Go pads with zeros after the sign/prefix ('0' flag, ignored with '-'), else with spaces.
    size = int(width or 0)
    if len(body) >= size:
        return body
    if "-" in flags:
        return body.ljust(size)
    if "0" in flags:
        return body[:numeric_prefix] + "0" * (size - len(body)) + body[numeric_prefix:]
    return body.rjust(size)


def _one(verb: str, flags: str, width: str | None, precision: str | None, arg: Any) -> str:
    sign = "+" if "+" in flags else (" " if " " in flags else "")
    if verb in "dxXob":
        if isinstance(arg, bool) or not isinstance(arg, int):
            return f"%!{verb}({type(arg).__name__}={_go_value(arg)})"
        digits = format(abs(arg), verb)
        prefix = {"x": "0x", "X": "0X", "o": "0", "b": "0b"}.get(verb, "") if "#" in flags else ""
        lead = ("-" if arg < 0 else sign) + prefix
        return _pad(lead + digits, flags, width, len(lead))
    if verb in "feEgG":
        if isinstance(arg, bool) or not isinstance(arg, int | float):
            return f"%!{verb}({type(arg).__name__}={_go_value(arg)})"
        body = format(float(arg), sign + (f".{precision}" if precision is not None else "") + verb)
        return _pad(body, flags, width, 1 if body[:1] in "+- " else 0)
    if verb == "t":
        text = _go_value(arg) if isinstance(arg, bool) else f"%!t({type(arg).__name__}={_go_value(arg)})"
    elif verb == "q":
        text = _quote(arg)
    elif verb in "sv":
        text = _go_value(arg)
        if precision is not None:
            text = text[: int(precision)]
    else:
        return f"%!{verb}(unknown verb)"
    align = "<" if "-" in flags else ">"
    return format(text, f"{align}{width or ''}")


def sprintf(fmt: Any, *args: Any) -> str:
    """Go's ``fmt.Sprintf`` for the verbs templates use: ``%s %v %q %d %x %X %o %b %f %e %g %t %%``,
    flags ``-+# 0``, width and precision (each at most 1000). Missing or extra arguments are
    reported inline as Go does (``%!d(MISSING)``, ``%!(EXTRA ...)``)."""
    text = str(fmt)
    out: list[str] = []
    size = 0
    used = 0
    last = 0
    for match in _VERB.finditer(text):
        out.append(text[last : match.start()])
        last = match.end()
        flags, width, precision, verb = match.groups()
        if verb == "%":
            out.append("%")
            continue
        for number in (width, precision):
            if number is not None and int(number) > _MAX_WIDTH:
                raise ValueError(f"sprintf: width or precision {number} is larger than {_MAX_WIDTH}")
        if used >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        piece = _one(verb, flags, width, precision, args[used])
        used += 1
        size += len(piece)
        _check_output(size, "sprintf")
        out.append(piece)
    out.append(text[last:])
    if used < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{type(a).__name__}={_go_value(a)}" for a in args[used:]) + ")")
    result = "".join(out)
    _check_output(len(result), "sprintf")
    return result


def sprint(*args: Any) -> str:
    """Go's ``fmt.Sprint``: operands concatenated, a space between two operands when neither is a string."""
    parts: list[str] = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            parts.append(" ")
        parts.append(_go_value(arg))
    result = "".join(parts)
    _check_output(len(result), "sprint")
    return result


# -- time ----------------------------------------------------------------------------------------


def now() -> datetime:
    """The render's wall time (UTC), as handed to ``TemplateEngine.render``; fails when none was given."""
    fragments.uncacheable()  # a fragment reading the clock is rendered every time
    wall = current_render().wall_time
    if wall is None:
        raise TemplateFailure("now(): this render has no clock (RenderInputs.wall_time is not set)")
    return datetime.fromtimestamp(wall, UTC)


def unix_time(seconds: Any) -> datetime:
    """The UTC time ``seconds`` after the Unix epoch."""
    return datetime.fromtimestamp(float(seconds), UTC)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _offset(t: datetime, sep: str, zulu: bool) -> str:
    delta = t.utcoffset() or timedelta(0)
    minutes = int(delta.total_seconds()) // 60
    if zulu and minutes == 0:
        return "Z"
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{sep}{mins:02d}"


# Go reference-time tokens, longest first so that "2006" wins over "2" and "01" over "1".
_TOKENS: Final[tuple[tuple[str, Callable[[datetime], str]], ...]] = (
    ("January", lambda t: _MONTHS[t.month - 1]),
    ("Monday", lambda t: _DAYS[t.weekday()]),
    ("Z07:00", lambda t: _offset(t, ":", True)),
    ("-07:00", lambda t: _offset(t, ":", False)),
    ("Z0700", lambda t: _offset(t, "", True)),
    ("-0700", lambda t: _offset(t, "", False)),
    (".000000000", lambda t: f".{t.microsecond:06d}000"),
    (".000000", lambda t: f".{t.microsecond:06d}"),
    (".000", lambda t: f".{t.microsecond // 1000:03d}"),
    ("2006", lambda t: f"{t.year:04d}"),
    ("Jan", lambda t: _MONTHS[t.month - 1][:3]),
    ("Mon", lambda t: _DAYS[t.weekday()][:3]),
    ("MST", lambda t: t.tzname() or "UTC"),
    ("_2", lambda t: f"{t.day:>2d}"),
    ("01", lambda t: f"{t.month:02d}"),
    ("02", lambda t: f"{t.day:02d}"),
    ("03", lambda t: f"{(t.hour % 12) or 12:02d}"),
    ("04", lambda t: f"{t.minute:02d}"),
    ("05", lambda t: f"{t.second:02d}"),
    ("06", lambda t: f"{t.year % 100:02d}"),
    ("15", lambda t: f"{t.hour:02d}"),
    ("PM", lambda t: "PM" if t.hour >= 12 else "AM"),
    ("pm", lambda t: "pm" if t.hour >= 12 else "am"),
    ("1", lambda t: str(t.month)),
    ("2", lambda t: str(t.day)),
    ("3", lambda t: str((t.hour % 12) or 12)),
    ("4", lambda t: str(t.minute)),
    ("5", lambda t: str(t.second)),
)
_TOKEN_RE = re.compile("|".join(re.escape(token) for token, _ in _TOKENS))
_TOKEN_FN = dict(_TOKENS)

RFC3339: Final = "2006-01-02T15:04:05Z07:00"


def _as_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return unix_time(value)
    raise ValueError(f"expected a time (now(), unix_time(), parse_time()), got {type(value).__name__}")


def format_time(value: Any, layout: str = RFC3339) -> str:
    """Formats a time with a Go reference layout (``2006-01-02 15:04:05``); default RFC 3339.

    The output is built here token by token (never through C ``strftime``), so it stays bounded.
    """
    t = _as_time(value)
    layout = str(layout)
    _check_output(len(layout) * 9, "format_time")
    return _TOKEN_RE.sub(lambda m: _TOKEN_FN[m.group(0)](t), layout)


_PARSE_TOKENS: Final = {
    "2006": r"(?P<Y>\d{4})", "01": r"(?P<m>\d{2})", "02": r"(?P<d>\d{2})", "15": r"(?P<H>\d{2})",
    "04": r"(?P<M>\d{2})", "05": r"(?P<S>\d{2})", "Z07:00": r"(?P<z>Z|[+-]\d{2}:\d{2})",
    "-07:00": r"(?P<z>[+-]\d{2}:\d{2})", "-0700": r"(?P<z>[+-]\d{4})", "Z0700": r"(?P<z>Z|[+-]\d{4})",
    ".000": r"\.(?P<f>\d{3})", ".000000": r"\.(?P<f>\d{6})", "Jan": r"(?P<b>[A-Z][a-z]{2})",
}
_PARSE_RE = re.compile("|".join(re.escape(t) for t in sorted(_PARSE_TOKENS, key=len, reverse=True)))


def parse_time(layout: Any, value: Any) -> datetime:
    """Parses ``value`` with a Go reference layout (argument order of the original's ``parseTime``).

    Supports the numeric tokens ``2006 01 02 15 04 05``, fractions ``.000``/``.000000``, ``Jan`` and
    the zone forms ``Z07:00 -07:00 -0700 Z0700``; a time without a zone is UTC.
    """
    layout, text = str(layout), str(value)
    pattern = "".join(
        _PARSE_TOKENS[part] if part in _PARSE_TOKENS else re.escape(part)
        for part in re.split(f"({_PARSE_RE.pattern})", layout)
        if part
    )
    match = re.fullmatch(pattern, text)
    if match is None:
        raise ValueError(f"parse_time: {text!r} does not match layout {layout!r}")
    got = match.groupdict()
    month = int(got["m"]) if got.get("m") else 1
    if got.get("b"):
        names = [m[:3] for m in _MONTHS]
        if got["b"] not in names:
            raise ValueError(f"parse_time: unknown month {got['b']!r}")
        month = names.index(got["b"]) + 1
    fraction = got.get("f") or "0"
    zone = UTC
    if got.get("z") and got["z"] != "Z":
        raw = got["z"].replace(":", "")
        minutes = int(raw[1:3]) * 60 + int(raw[3:5])
        zone = timezone(timedelta(minutes=-minutes if raw[0] == "-" else minutes))
    return datetime(int(got.get("Y") or 1), month, int(got.get("d") or 1), int(got.get("H") or 0),
                    int(got.get("M") or 0), int(got.get("S") or 0), int(fraction.ljust(6, "0")[:6]), tzinfo=zone)


# -- registration --------------------------------------------------------------------------------

FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "sha1": sha1,
    "sha256": sha256,
    "md5": md5,
    "hmac_sha1": hmac_sha1,
    "hmacSHA1": hmac_sha1,
    "hmac_sha256": hmac_sha256,
    "hmacSHA256": hmac_sha256,
    "hex": hex_encode,
    "sprintf": sprintf,
    "sprint": sprint,
    "now": now,
    "unix_time": unix_time,
    "unixTime": unix_time,
    "parse_time": parse_time,
    "parseTime": parse_time,
    "format_time": format_time,
}
"""Globals (``sprintf("%s-%d", a, b)``); those taking a value first are also filters (``name | sha1``)."""

FUNCTION_FILTERS: Final[dict[str, Callable[..., Any]]] = {
    "sha1": sha1,
    "hmac_sha1": hmac_sha1,
    "hmac_sha256": hmac_sha256,
    "hex": hex_encode,
    "format_time": format_time,
}
