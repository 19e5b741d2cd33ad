"""Parsers of annotation values: each takes the raw string and returns the value the templates write out, or
raises ``ValueError`` saying what is accepted. A value that reaches a template has passed one of them, so it is
safe in the HAProxy line it ends up in (no whitespace where a word is expected, no quotes, no ``%``, ``#`` or
control characters). Imports only the templating safety checks, the error statuses HAProxy knows
(``haptic.templating.error_pages``) and the linear-time regex compiler.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from haptic.templating.error_pages import ERROR_STATUSES
from haptic.templating.safety import is_hostname, parse_cidrs, path_regex_problem

Parser = Callable[[str], Any]

_DIGITS = re.compile(r"^[0-9]{1,9}\Z")
_DURATION = re.compile(r"^([0-9]{1,9})(us|ms|s|m|h|d)?\Z")
_SIZE = re.compile(r"^([0-9]{1,12})([kKmMgG]?)\Z")
_TOKEN_LIST = re.compile(r"^[A-Za-z0-9\-_*]+(\s*,\s*[A-Za-z0-9\-_*]+)*\Z")
_ORIGIN = re.compile(r"^(\*|https?://[a-z0-9.\-]+(:[0-9]{1,5})?)\Z")
_URL = re.compile(r"^https?://[A-Za-z0-9\-._~!$&()*+,;=:@/?]+\Z")
_URL_PATH = re.compile(r"^/[A-Za-z0-9\-._~!&()*+,;=:@/]*\Z")
_TARGET = re.compile(r"^/?[A-Za-z0-9\-._~!&()*+,;=:@/]*(\$[0-9][A-Za-z0-9\-._~!&()*+,;=:@/]*)*\Z")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-_.]{0,127}\Z")
_REALM = re.compile(r"^[A-Za-z0-9 \-_.,:;()/@]{1,128}\Z")
_SECRET_REF = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-]{0,127}\Z")
_HEADER_VALUE = re.compile(r"^[A-Za-z0-9 \-_.,:;=/()*+@!?&~]{0,512}\Z")
_HOST_PORT = re.compile(r"^([a-z0-9.\-]+)(:[0-9]{1,5})?\Z")


def boolean(value: str) -> bool:
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    raise ValueError("expected true or false")


def integer(low: int, high: int) -> Parser:
    def parse(value: str) -> int:
        if not _DIGITS.match(value) or not low <= int(value) <= high:
            raise ValueError(f"expected an integer from {low} to {high}")
        return int(value)
    return parse


def seconds(value: str) -> str:
    """Whole seconds (ingress-nginx's proxy timeouts) → an HAProxy duration."""
    if not _DIGITS.match(value):
        raise ValueError("expected whole seconds, e.g. 30")
    return f"{int(value)}s"


def duration(value: str) -> str:
    """An HAProxy duration: a number with an optional unit us, ms, s, m, h, d (no unit: milliseconds)."""
    if not _DURATION.match(value):
        raise ValueError("expected a duration, e.g. 30s or 500ms")
    return value


def duration_seconds(value: str) -> int:
    """A duration such as ``1s``, ``10m`` (no unit: milliseconds) in whole seconds, at least 1."""
    found = _DURATION.match(value)
    if not found:
        raise ValueError("expected a duration, e.g. 1s or 1m")
    scale = {"us": 1e-6, "ms": 1e-3, None: 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]
    return max(1, int(int(found.group(1)) * scale))


def size(value: str) -> int:
    """nginx's size syntax (``8m``, ``512k``, ``1g``, bytes without a unit) in bytes; 0: unlimited."""
    found = _SIZE.match(value)
    if not found:
        raise ValueError("expected a size such as 8m, 512k or 1g")
    return int(found.group(1)) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[found.group(2).lower()]


def cidrs(value: str) -> list[str]:
    try:
        return parse_cidrs(value)
    except ValueError:
        raise ValueError("expected a comma-separated list of CIDRs or addresses") from None


def token_list(value: str) -> str:
    """``GET, PUT`` / ``X-A,X-B``: the comma-separated list normalized to ``a, b``."""
    if not _TOKEN_LIST.match(value.strip()):
        raise ValueError("expected a comma-separated list of names (letters, digits, '-', '_', '*')")
    return ", ".join(part.strip() for part in value.split(","))


def origins(value: str) -> list[str]:
    """``*`` or a comma- or space-separated list of ``scheme://host[:port]`` origins."""
    found = [part for part in re.split(r"[\s,]+", value.strip()) if part]
    if not found or any(not _ORIGIN.match(origin) for origin in found):
        raise ValueError("expected * or a list of origins such as https://app.example.com")
    return ["*"] if "*" in found else found


def url(value: str) -> str:
    if not _URL.match(value) or len(value) > 2048:
        raise ValueError("expected an absolute http(s) URL without spaces, quotes or '%'")
    return value


def url_or_path(value: str) -> str:
    if _URL_PATH.match(value) and len(value) <= 2048:
        return value
    return url(value)


def url_path(value: str) -> str:
    if not _URL_PATH.match(value) or len(value) > 2048:
        raise ValueError("expected a path starting with / without spaces, quotes or '%'")
    return value


def rewrite_target(value: str) -> str:
    """ingress-nginx's rewrite target (``/$2``) → HAProxy's replacement format (``/\\2``)."""
    if not _TARGET.match(value) or len(value) > 2048:
        raise ValueError("expected a path with optional capture references $1..$9")
    return re.sub(r"\$([0-9])", r"\\\1", value)


def regex(value: str) -> str:
    """A path regular expression that RE2 accepts (linear time) and that is safe inside single quotes."""
    problem = path_regex_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def name(value: str) -> str:
    """A cookie or header name."""
    if not _NAME.match(value):
        raise ValueError("expected a name of letters, digits, '-', '_' and '.'")
    return value


def header_name(value: str) -> str:
    if not _HEADER_NAME.match(value):
        raise ValueError("expected a header name")
    return value


def header_value(value: str) -> str:
    if not _HEADER_VALUE.match(value):
        raise ValueError("expected a header value without quotes, '%', '#', '\\' or control characters")
    return value


def realm(value: str) -> str:
    if not _REALM.match(value):
        raise ValueError("expected a realm of letters, digits, spaces and - _ . , : ; ( ) / @")
    return value


def secret_ref(value: str) -> str:
    """``name`` or ``namespace/name`` of a Secret."""
    if not _SECRET_REF.match(value):
        raise ValueError("expected a Secret name or namespace/name")
    return value


def host_port(value: str) -> str:
    found = _HOST_PORT.match(value)
    if not found or not is_hostname(found.group(1)):
        raise ValueError("expected a host name, optionally with :port")
    return value


def hosts(value: str) -> list[str]:
    """A comma- or space-separated list of host names."""
    found = [part.lower() for part in re.split(r"[\s,]+", value.strip()) if part]
    if not found or any(not is_hostname(host) for host in found):
        raise ValueError("expected a comma-separated list of host names")
    return found


def one_of(*choices: str, lower: bool = False) -> Parser:
    def parse(value: str) -> str:
        got = value.lower() if lower else value
        if got not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return got
    return parse


def status_code(*allowed: int) -> Parser:
    def parse(value: str) -> int:
        if not _DIGITS.match(value) or int(value) not in allowed:
            raise ValueError(f"expected one of {', '.join(str(code) for code in allowed)}")
        return int(value)
    return parse


def http_status(value: str) -> int:
    if not _DIGITS.match(value) or not 200 <= int(value) <= 599:
        raise ValueError("expected an HTTP status code from 200 to 599")
    return int(value)


def error_status_list(value: str) -> list[int]:
    """Comma-separated error statuses HAProxy has an error message for (``http-response return ...
    default-errorfiles`` refuses any other at ``haproxy -c``)."""
    allowed = [code for code in ERROR_STATUSES if code >= 400]
    codes = [part.strip() for part in value.split(",") if part.strip()]
    if not codes or any(not _DIGITS.match(code) or int(code) not in allowed for code in codes):
        raise ValueError(f"expected a comma-separated list of {', '.join(map(str, allowed))}")
    return sorted({int(code) for code in codes})


def header_pairs(value: str) -> list[tuple[str, str]]:
    """haproxy.org's header lists: one ``Name value`` per line."""
    pairs = []
    for line in value.splitlines():
        if not line.strip():
            continue
        header, _, text = line.strip().partition(" ")
        pairs.append((header_name(header), header_value(text.strip())))
    if not pairs:
        raise ValueError("expected one 'Name value' per line")
    return pairs


def path_rewrite(value: str) -> tuple[str, str]:
    """haproxy.org's ``path-rewrite``: ``<regex> <replacement>``, or a lone replacement for the whole path."""
    parts = value.split()
    if len(parts) == 1:
        return ("^(.*)$", url_path(parts[0]))
    if len(parts) != 2:
        raise ValueError("expected '<regex> <replacement>' or '<new path>'")
    replacement = parts[1]
    if not re.match(r"^/?[A-Za-z0-9\-._~!&()*+,;=:@/\\]*\Z", replacement):
        raise ValueError("expected a replacement path with optional \\1..\\9 references")
    return (regex(parts[0]), replacement)
