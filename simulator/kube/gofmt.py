"""Values printed the way the API server's Go code prints them (``%v``, ``%q``, ``%#v``) and JSON the way
Go's ``encoding/json`` writes it, so that messages and error bodies match the real server byte for byte."""

from __future__ import annotations

import json
import math
from typing import Any

_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})
_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
                  "\\": "\\\\", '"': '\\"'}


def go_json(value: Any) -> str:
    """Compact JSON as ``json.Marshal`` writes it: UTF-8 kept, ``<``, ``>``, ``&``, U+2028/9 escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_HTML)


def go_float(value: float) -> str:
    """``%v`` of a float64 (``%g`` at the shortest precision): ``0.5``, ``100000``, ``1e+06``, ``1.5e-05``."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    # repr has the shortest round-trip digits; "%e" of them gives the digits and the decimal exponent.
    mantissa, _, exp_text = f"{abs(float(repr(value))):.{_digits(value) - 1}e}".partition("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    exp = int(exp_text)
    if exp < -4 or exp >= 6:  # strconv's %g rule for the shortest precision
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp >= len(digits) - 1:
        return sign + digits + "0" * (exp - len(digits) + 1)
    if exp >= 0:
        return sign + digits[: exp + 1] + "." + digits[exp + 1:]
    return sign + "0." + "0" * (-exp - 1) + digits


def _digits(value: float) -> int:
    """How many significant digits the shortest round-trip representation of ``value`` has."""
    text = repr(abs(value)).lower()
    significand = text.partition("e")[0].replace(".", "").lstrip("0")
    return max(1, len(significand.rstrip("0")) if "." in text or "e" in text else len(significand))


def go_quote(text: str) -> str:
    """``%q`` (strconv.Quote): printable characters kept, the rest escaped Go-style."""
    out = ['"']
    for char in text:
        escaped = _QUOTE_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable() or char == " ":
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def go_value(value: Any) -> str:
    """``%v`` of a JSON value as decoded into Go interfaces (int64, float64, string, bool, maps, slices)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def go_syntax(value: Any) -> str:
    """``%#v`` of a JSON value decoded into ``interface{}`` (maps and slices of ``interface {}``)."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(v) for v in value) + "}"
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(f"{go_quote(k)}:{go_syntax(value[k])}"
                                                       for k in sorted(value)) + "}"
    return repr(value)


def go_strings(values: list[str]) -> str:
    """``%#v`` of a ``[]string``."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"
