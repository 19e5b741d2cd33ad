"""Custom error pages for templates: an ``{status: body}`` setting → the HTTP responses ``errorfile`` loads.

HAProxy's ``errorfile`` takes a whole HTTP response (status line, headers, body) that must fit in one
buffer, for a fixed set of statuses it produces itself. Imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

# The statuses HAProxy 2.6 accepts in errorfile/http-errors (its documentation of `errorfile`).
ERROR_STATUSES = (200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504)
# tune.bufsize is 16 KiB by default and HAProxy refuses a message that does not fit: headroom for headers.
MAX_BODY = 12 * 1024


def error_pages(pages: Any) -> dict[str, Any]:
    """``{"files": [(status, response text)], "problems": [messages]}`` for the mapping ``pages`` (status →
    HTML body); an entry with an unknown status, a body that is not text or too large is left out with a
    problem naming it."""
    files: list[tuple[str, str]] = []
    problems: list[str] = []
    if pages in (None, ""):
        return {"files": files, "problems": problems}
    if not isinstance(pages, Mapping):
        return {"files": files, "problems": ["expected a mapping of HTTP status to HTML body"]}
    for key in sorted(pages, key=str):
        body = pages[key]
        status = int(key) if str(key).isdigit() else 0
        if status not in ERROR_STATUSES:
            problems.append(f"{key!r}: not a status HAProxy answers itself ({', '.join(map(str, ERROR_STATUSES))})")
        elif not isinstance(body, str) or len(body.encode()) > MAX_BODY:
            problems.append(f"{status}: the body must be text of at most {MAX_BODY} bytes")
        else:
            data = body.encode()
            head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: text/html\r\n"
                    f"Content-Length: {len(data)}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
            files.append((str(status), head + body))
    return {"files": files, "problems": problems}
