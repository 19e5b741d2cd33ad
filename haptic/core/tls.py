"""``default_ssl_context()``: the one default client TLS context of this process.

Building a context loads the CA bundle, which costs tens of milliseconds of CPU (68 ms measured on the
2-core CI machine): an HTTP client created per request or per deployment paid it every time, before
its first byte went out. An ``SSLContext`` is safe to share between clients and threads.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx

__all__ = ["default_ssl_context"]


@cache
def default_ssl_context() -> ssl.SSLContext:
    """What ``httpx`` verifies with by default (certifi's CA bundle), built once."""
    return httpx.create_ssl_context()
