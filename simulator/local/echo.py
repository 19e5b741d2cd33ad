"""Echo backends: tiny real HTTP servers that answer every request with their own name and what they saw.

The answer is JSON (``{"server": name, "method": ..., "path": ..., "host": ..., "headers": {...},
"body": ...}``: the request as haproxy forwarded it, header names lower-cased, a header sent several
times as a list, the body cut at 4 KiB) plus an ``X-Echo-Server`` header, so a traffic check can tell
which backend served a request and what reached it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json


class EchoServer:
    """One HTTP/1.1 server on ``host:port`` (port 0 picks one); counts the requests it served."""

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.name = name
        self.host = host
        self.port = port
        self.hits = 0
        self._server: asyncio.Server | None = None

    def __repr__(self) -> str:
        return f"EchoServer({self.name!r}, {self.host}:{self.port}, hits={self.hits})"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> EchoServer:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path, headers = _parse_head(head)
                length = int(_first(headers.get("content-length")) or 0)
                received = await reader.readexactly(length) if length else b""
                self.hits += 1
                body = json.dumps({"server": self.name, "method": method, "path": path,
                                   "host": _first(headers.get("host")), "headers": headers,
                                   "body": received[:_BODY_SHOWN].decode("utf-8", "replace")}).encode() + b"\n"
                close = _first(headers.get("connection")).lower() == "close"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"X-Echo-Server: {self.name}\r\nContent-Length: {len(body)}\r\n".encode()
                    + (b"Connection: close\r\n" if close else b"")
                    + b"\r\n" + body
                )
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


_BODY_SHOWN = 4096


def _first(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return value[0]
    return value or ""


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str | list[str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
    headers: dict[str, str | list[str]] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key, text = name.strip().lower(), value.strip()
        known = headers.get(key)
        if known is None:
            headers[key] = text
        else:
            headers[key] = [*known, text] if isinstance(known, list) else [known, text]
    return method, path, headers
