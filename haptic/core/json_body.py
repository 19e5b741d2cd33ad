"""``parse_json_body``: a request body to JSON, or one clear error for a client (HTTP 400).

Every HTTP server of ours (the webhook, the simulator's fake Kubernetes and Dataplane APIs) reads
bodies through it, so that bad bytes never become a 500 with a traceback: not UTF-8 (named with the
offset), not JSON, or nested deeper than the code that walks JSON recursively can follow.
"""

from __future__ import annotations

import json
from typing import Any

#: Deeper than any Kubernetes object or Dataplane API body (the API server's own limit is 10000).
MAX_DEPTH = 1000


class BodyError(ValueError):
    """The body cannot be read; the message says why, for a 400 answer."""


def decode_utf8(raw: bytes, what: str = "body") -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"{what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of decoded JSON (iterative: a hostile value cannot exhaust the stack), at most ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def parse_json_body(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    text = decode_utf8(raw) if isinstance(raw, bytes) else raw
    try:
        value = json.loads(text)
    except RecursionError:
        raise BodyError(f"body nests deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise BodyError(f"body is not JSON: {exc}") from None
    if depth_of(value, max_depth) > max_depth:
        raise BodyError(f"body nests deeper than {max_depth} levels")
    return value
