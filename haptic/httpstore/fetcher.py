"""One conditional GET with the original's limits: retries with exponential backoff, a timeout per
attempt on the caller's clock, at most ``max_size`` bytes of body (read streaming, so an endless
answer is cut off), at most ``MAX_REDIRECTS`` redirects, ``If-None-Match``/``If-Modified-Since``
from the last accepted answer (304: unchanged).

Errors name the URL (without user info) and the cause, never a credential.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from haptic.core import Clock
from haptic.templating.http_fetch import FetchRequest, display_url

USER_AGENT = "haptic-python/1.0 (+http.fetch)"
MAX_REDIRECTS = 10
RETRY_DELAY = 1.0
MAX_BACKOFF_FACTOR = 32


@dataclass(frozen=True)
class Fetched:
    """A fetch's outcome: ``content`` (200), ``not_modified`` (304) or ``error``."""

    content: str | None = None
    etag: str = ""
    last_modified: str = ""
    not_modified: bool = False
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class _TooLarge(Exception):
    pass


class _Status(Exception):
    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(f"HTTP {status}")


def _headers(request: FetchRequest, etag: str, last_modified: str) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    auth = request.auth
    if auth is not None and auth.type == "bearer":
        headers["Authorization"] = f"Bearer {auth.token}"
    elif auth is not None and auth.type == "header":
        headers.update(dict(auth.headers))
    return headers


async def _once(client: httpx.AsyncClient, request: FetchRequest, etag: str, last_modified: str) -> Fetched:
    auth = request.auth
    basic = httpx.BasicAuth(auth.username, auth.password) if auth is not None and auth.type == "basic" else None
    async with client.stream("GET", request.url, headers=_headers(request, etag, last_modified),
                             auth=basic if basic is not None else httpx.USE_CLIENT_DEFAULT,
                             follow_redirects=True) as response:
        if response.status_code == 304 and (etag or last_modified):
            return Fetched(not_modified=True, etag=etag, last_modified=last_modified)
        if response.status_code != 200:
            raise _Status(response.status_code)
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > request.options.max_size:
            raise _TooLarge
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > request.options.max_size:
                raise _TooLarge
        return Fetched(content=body.decode(response.encoding or "utf-8", errors="replace"),
                       etag=response.headers.get("ETag", ""),
                       last_modified=response.headers.get("Last-Modified", ""))


async def fetch(client: httpx.AsyncClient, request: FetchRequest, clock: Clock, *, etag: str = "",
                last_modified: str = "", sleep: Callable[[float], Awaitable[None]] | None = None) -> Fetched:
    """GETs ``request.url``: 1 + ``retries`` attempts, each bounded by ``timeout`` on ``clock``."""
    wait = sleep or clock.sleep
    url = display_url(request.url)
    error = ""
    for attempt in range(request.options.retries + 1):
        if attempt:
            await wait(RETRY_DELAY * min(2 ** (attempt - 1), MAX_BACKOFF_FACTOR))
        try:
            async with clock.timeout(request.options.timeout):
                return await _once(client, request, etag, last_modified)
        except _TooLarge:
            # The same answer would be as large on the next attempt.
            return Fetched(error=f"GET {url}: the answer is larger than {request.options.max_size} bytes")
        except _Status as exc:
            error = f"GET {url}: HTTP {exc.status}"
            if 400 <= exc.status < 500 and exc.status not in (408, 429):
                return Fetched(error=error)
        except TimeoutError:
            error = f"GET {url}: no answer within {request.options.timeout:g}s"
        except httpx.TooManyRedirects:
            return Fetched(error=f"GET {url}: more than {MAX_REDIRECTS} redirects")
        except httpx.HTTPError as exc:
            # httpx messages carry the URL as requested; ours has no user info, and auth sits in headers.
            error = f"GET {url}: {type(exc).__name__}"
    return Fetched(error=f"{error} (after {request.options.retries + 1} attempts)")


def make_client(transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
    """The client the store fetches with; ``transport`` None: TCP. Timeouts are the fetch's own."""
    return httpx.AsyncClient(transport=transport, max_redirects=MAX_REDIRECTS, timeout=None, trust_env=False)
