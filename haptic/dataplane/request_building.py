"""The Dataplane client's requests, built as ``httpx.AsyncClient.build_request`` builds them, for less.

An endpoint change is 40 server PUTs; httpx's general path spent most of a request's client-side CPU on what
does not change between them: parsing the URL again (it checks every character of it), merging the client's
headers, URL and cookies into the request, and then rebuilding the headers to put ``Host`` first. Here the
URL without its query is parsed once (bounded cache), the query (already encoded) is put in, and the headers
are laid out once, in httpx's order: the same method, URL, headers and body on the wire. Requests httpx would
build otherwise — multipart uploads, or a client holding cookies (the Dataplane API sets none) — are left to
httpx's ``build_request``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import httpx

__all__ = ["build_request", "encode_json", "parsed_url", "url_with_query"]

#: httpx's JSON body encoding (``httpx._content.encode_json``), one encoder for every request
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_JSON_TYPE = (b"Content-Type", b"application/json")
#: methods httpx gives ``Content-Length: 0`` when they carry no body
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def encode_json(body: Any) -> bytes:
    return _JSON.encode(body).encode()


@lru_cache(maxsize=1024)
def parsed_url(url: str) -> httpx.URL:
    """An absolute URL without query, parsed by httpx (immutable: shared by every client and request). The
    Dataplane paths repeat change after change (the same backends' servers); 1,024 (under a megabyte) is every
    slot of 50 backends of 10 slots on two pods, where one change touches a few backends."""
    return httpx.URL(url)


def url_with_query(url: str, params: Mapping[str, str | int] | None) -> httpx.URL:
    """``url`` (absolute, no query) with ``params``, as ``httpx.URL(f"{url}?{httpx.QueryParams(params)}")``.

    The query changes every request (``version``), so only the rest is cached: the query goes into the parse
    result as is. ``urlencode`` is what ``QueryParams`` renders with (for ``str`` and ``int`` values), and its
    output is made of characters httpx's parse leaves alone, so nothing would have been re-encoded. Not for
    ``bool`` values: ``QueryParams`` spells them ``true``/``false``, ``urlencode`` ``True``/``False``."""
    parsed = parsed_url(url)
    if not params:
        return parsed
    if any(isinstance(value, bool) for value in params.values()):
        raise TypeError(f"query parameters are str or int, not bool: {dict(params)}")
    with_query = httpx.URL(parsed)  # (a copy sharing the parse result: no parsing)
    with_query._uri_reference = parsed._uri_reference._replace(query=urlencode(params))
    return with_query


def build_request(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    *,
    content: bytes | None = None,
    content_type: str | None = None,
    json_body: Any = None,
    files: Mapping[str, tuple[str, bytes]] | None = None,
    data: Mapping[str, str] | None = None,
) -> httpx.Request:
    """What ``client.build_request(method, url, content=..., json=..., files=..., data=...,
    headers={"Content-Type": content_type})`` returns, for ``client.send``. ``content_type`` goes with
    ``content`` only."""
    if files is not None or data is not None or client.cookies:
        return client.build_request(method, url, content=content, json=json_body, files=files, data=data,
                                    headers={"Content-Type": content_type} if content_type else None)
    body = encode_json(json_body) if content is None and json_body is not None else content
    # httpx's order: Host and an empty body's length first (``Request._prepare``), the client's headers, the
    # caller's, then what the body adds (its length; JSON's type).
    headers = [(b"Host", url.netloc)]
    if not body and method in _BODY_METHODS:
        headers.append((b"Content-Length", b"0"))
    headers += client.headers.raw
    if content_type:
        headers.append((b"Content-Type", content_type.encode()))
    if body:
        headers.append((b"Content-Length", str(len(body)).encode()))
    if content is None and json_body is not None:
        headers.append(_JSON_TYPE)
    request = httpx.Request(method, url, headers=headers, stream=httpx.ByteStream(body or b""))
    request.read()  # (``content=`` reads it: ``request.content`` then works, as for httpx's own)
    return request
