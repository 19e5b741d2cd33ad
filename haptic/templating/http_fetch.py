"""``http.fetch(url, options, auth)`` in templates (``http.Fetch`` as in the original).

A render never does I/O: the ``http`` object asks an ``HttpSource`` for content it already holds.
The controller's source (``haptic.httpstore``) answers a URL it has not fetched yet with
``HttpFetchPending``; the coordinator fetches every URL a render asked for and renders again, which
gives templates the original's "the first call fetches synchronously" without blocking a render.
A validation test's source is its ``httpResources`` fixtures (``FixtureHttpSource``).

Options (all optional): ``delay`` (refresh period, ``"60s"``; 0 or absent: fetched once), ``timeout``
(``"30s"``), ``retries`` (3), ``critical`` (false: a URL that cannot be fetched renders as ``""``;
true: it fails the render), ``maxSize`` (bytes, default and cap 10 MiB). Auth (optional):
``{"type": "basic", "username", "password"}``, ``{"type": "bearer", "token"}`` or
``{"type": "header", "headers": {name: value}}``, with values a template reads from a Secret. Auth
values never appear in a ``repr``, an error or a log line.

Imports nothing from ``haptic`` but the templating errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol
from urllib.parse import urlsplit

from jinja2 import Undefined

from haptic.templating import fragments
from haptic.templating.errors import TemplateRenderError, TemplatingError

DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_RETRIES: Final = 3
MAX_SIZE: Final = 10 * 1024 * 1024
MAX_RETRIES: Final = 10
MAX_TIMEOUT: Final = 300.0
MIN_DELAY: Final = 1.0
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_OPTION_KEYS = frozenset({"delay", "timeout", "retries", "critical", "maxSize", "max_size"})


class HttpFetchPending(TemplatingError):
    """The render asked for URLs the source has not fetched yet (``requests``): fetch them, render again."""

    def __init__(self, requests: tuple[FetchRequest, ...]) -> None:
        self.requests = requests
        super().__init__("http.fetch: waiting for the first fetch of " + ", ".join(r.url for r in requests))


def _seconds(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise TemplateRenderError(f"http.fetch option {name!r} must be a duration like '60s', got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in ("0", ""):
            return 0.0
        parts = _DURATION_PART.findall(text)
        if parts and "".join(n + u for n, u in parts) == text:
            scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
            return sum(float(n) * scale[u] for n, u in parts)
    raise TemplateRenderError(f"http.fetch option {name!r} must be a duration like '60s', got {value!r}")


@dataclass(frozen=True)
class FetchOptions:
    delay: float = 0.0
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    critical: bool = False
    max_size: int = MAX_SIZE

    @classmethod
    def parse(cls, raw: Any) -> FetchOptions:
        if raw is None or isinstance(raw, Undefined):
            return cls()
        if not isinstance(raw, Mapping):
            raise TemplateRenderError(f"http.fetch options must be a mapping, got {type(raw).__name__}")
        unknown = sorted(str(k) for k in raw if k not in _OPTION_KEYS)
        if unknown:
            raise TemplateRenderError(f"http.fetch: unknown option(s) {', '.join(unknown)} "
                                      f"(known: delay, timeout, retries, critical, maxSize)")
        delay = _seconds(raw.get("delay", 0), "delay")
        if delay and delay < MIN_DELAY:
            raise TemplateRenderError(f"http.fetch option 'delay' must be 0 or at least {MIN_DELAY:.0f}s, got {delay}")
        timeout = _seconds(raw.get("timeout", DEFAULT_TIMEOUT), "timeout")
        if not 0 < timeout <= MAX_TIMEOUT:
            raise TemplateRenderError(f"http.fetch option 'timeout' must be above 0 and at most {MAX_TIMEOUT:.0f}s")
        retries = raw.get("retries", DEFAULT_RETRIES)
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
            raise TemplateRenderError(f"http.fetch option 'retries' must be an integer from 0 to {MAX_RETRIES}")
        critical = raw.get("critical", False)
        if not isinstance(critical, bool):
            raise TemplateRenderError("http.fetch option 'critical' must be true or false")
        size = raw.get("maxSize", raw.get("max_size", MAX_SIZE))
        if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_SIZE:
            raise TemplateRenderError(f"http.fetch option 'maxSize' must be an integer from 1 to {MAX_SIZE}")
        return cls(delay=delay, timeout=timeout, retries=retries, critical=critical, max_size=size)


@dataclass(frozen=True)
class FetchAuth:
    """Credentials for one URL. ``repr`` shows the type only: the values come from Secrets."""

    type: Literal["basic", "bearer", "header"]
    username: str = field(default="", repr=False)
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @classmethod
    def parse(cls, raw: Any) -> FetchAuth | None:
        if raw is None or isinstance(raw, Undefined) or raw == {}:
            return None
        if not isinstance(raw, Mapping):
            raise TemplateRenderError(f"http.fetch auth must be a mapping, got {type(raw).__name__}")
        kind = raw.get("type")
        if kind == "basic":
            username, password = raw.get("username"), raw.get("password")
            if not isinstance(username, str) or not isinstance(password, str) or not username:
                raise TemplateRenderError("http.fetch basic auth needs string 'username' and 'password'")
            return cls("basic", username=username, password=password)
        if kind == "bearer":
            token = raw.get("token")
            if not isinstance(token, str) or not token:
                raise TemplateRenderError("http.fetch bearer auth needs a non-empty string 'token'")
            return cls("bearer", token=token)
        if kind == "header":
            headers = raw.get("headers")
            if not isinstance(headers, Mapping) or not headers or not all(
                    isinstance(k, str) and k and isinstance(v, str) for k, v in headers.items()):
                raise TemplateRenderError("http.fetch header auth needs 'headers', a mapping of strings")
            return cls("header", headers=tuple(sorted(headers.items())))
        raise TemplateRenderError(f"http.fetch auth 'type' must be basic, bearer or header, got {kind!r}")

    def secrets(self) -> tuple[str, ...]:
        """The values to keep out of logs (for a ``Redactor``)."""
        return tuple(v for v in (self.password, self.token, *(v for _, v in self.headers)) if v)


@dataclass(frozen=True)
class FetchRequest:
    url: str
    options: FetchOptions = field(default_factory=FetchOptions)
    auth: FetchAuth | None = None

    @classmethod
    def parse(cls, url: Any, options: Any = None, auth: Any = None) -> FetchRequest:
        if not isinstance(url, str) or not url:
            raise TemplateRenderError(f"http.fetch needs a URL string, got {url!r}")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TemplateRenderError(f"http.fetch: {display_url(url)!r} is not an http(s) URL")
        if parts.username is not None or parts.password is not None:
            raise TemplateRenderError(f"http.fetch: {display_url(url)!r}: give credentials in 'auth', not in the URL")
        return cls(url, FetchOptions.parse(options), FetchAuth.parse(auth))


def display_url(url: str) -> str:
    """The URL without user info (credentials never reach a message)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()


@dataclass(frozen=True)
class Lookup:
    """A source's answer: ``content`` (fetched), or ``pending`` (never fetched), or ``error`` (no content)."""

    content: str | None = None
    pending: bool = False
    error: str = ""


class HttpSource(Protocol):
    def lookup(self, request: FetchRequest) -> Lookup: ...


class HttpFetcher:
    """The ``http`` object of the render context. Collects every URL a render asks for and is missing."""

    __slots__ = ("_missing", "_source")

    def __init__(self, source: HttpSource | None) -> None:
        self._source = source
        self._missing: dict[str, FetchRequest] = {}

    def fetch(self, url: Any, options: Any = None, auth: Any = None) -> str:
        fragments.uncacheable()  # content from outside the cluster: a fragment fetching is rendered every time
        request = FetchRequest.parse(url, options, auth)
        if self._source is None:
            raise TemplateRenderError(f"http.fetch({request.url!r}): HTTP content is not available in this render")
        found = self._source.lookup(request)
        if found.pending:
            # Keep rendering: the other URLs this render needs are fetched in the same round.
            self._missing.setdefault(request.url, request)
            return ""
        if found.content is not None:
            return found.content
        if request.options.critical:
            raise TemplateRenderError(f"http.fetch({request.url!r}) failed: {found.error}")
        return ""

    #: the original's spelling
    Fetch = fetch

    def raise_if_missing(self) -> None:
        """After a render: ``HttpFetchPending`` when some URL has yet to be fetched."""
        if self._missing:
            raise HttpFetchPending(tuple(self._missing[url] for url in sorted(self._missing)))


class FixtureHttpSource:
    """A validation test's ``httpResources``: URL -> content; an unmocked URL is an error."""

    def __init__(self, content: Mapping[str, str]) -> None:
        self._content = dict(content)

    def lookup(self, request: FetchRequest) -> Lookup:
        if request.url in self._content:
            return Lookup(content=self._content[request.url])
        # As in the original, a test fails on an unmocked URL, critical or not.
        raise TemplateRenderError(f"http.fetch({request.url!r}): no httpResources fixture for this URL")
