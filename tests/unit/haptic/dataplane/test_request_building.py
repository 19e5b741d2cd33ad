"""The client's requests are built without httpx's general path: on the wire they must be what it would send."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest

from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.request_building import build_request, parsed_url, url_with_query

PATHS = ("/info", "/services/haproxy/configuration/backends/be%2Fx/servers/s%201",
         "/services/haproxy/runtime/maps/a%20b%2Bc%25d%C3%A9/entries")
PARAMS: tuple[dict[str, str | int] | None, ...] = (
    None, {}, {"version": 3}, {"transaction_id": "a b&c/é?#=%+;"}, {"version": 7, "skip_reload": "true"},
    {"force_sync": "false"})
#: (content, content type, JSON body)
BODIES: tuple[tuple[bytes | None, str | None, Any], ...] = (
    (None, None, None), (b"global\n  daemon\n", "text/plain", None), (b"", "text/plain", None),
    (None, None, {"name": "s 1", "address": "10.0.0.3", "port": 80, "weight": 1, "note": "é\u2028"}),
    (None, None, {}), (None, None, [{"key": "k", "value": "v"}]))


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200)


def on_the_wire(request: httpx.Request) -> tuple[Any, ...]:
    url = request.url
    return (request.method, str(url), url.raw_path, url.scheme, url.host, url.port, url.query, url.netloc,
            request.headers.raw, request.content, request.extensions)


@pytest.mark.parametrize("base", ["http://dp.test:5555", "https://10.1.2.3:5555/", "http://[fd00::1]:5555/v3"])
async def test_requests_are_what_httpx_would_build_from_base_url_path_parameters_and_body(base: str) -> None:
    recorder = Recorder()
    client = DataplaneClient(base, "admin", "pw", transport=recorder)
    reference = httpx.AsyncClient(base_url=client.base_url, auth=httpx.BasicAuth("admin", "pw"),
                                  timeout=httpx.Timeout(30.0), transport=recorder)
    assert client.http.base_url == reference.base_url  # (given parsed: for ``http``'s relative URLs)
    for method, path, params, (content, content_type, json_body) in itertools.product(
            ("GET", "DELETE", "PUT", "POST", "PATCH"), PATHS, PARAMS, BODIES):
        ours = build_request(client.http, method, url_with_query(client.base_url + path, params), content=content,
                             content_type=content_type, json_body=json_body)
        theirs = reference.build_request(method, path, params=params, content=content, json=json_body,
                                         headers={"Content-Type": content_type} if content_type else None)
        await client.http.send(ours)
        await reference.send(theirs)
        sent, expected = recorder.requests[-2:]
        assert on_the_wire(sent) == on_the_wire(expected), (method, path, params, content, json_body)
    await client.aclose()
    await reference.aclose()


async def test_server_writes_take_the_direct_path_and_parse_each_url_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def general(*args: Any, **kwargs: Any) -> httpx.Request:
        raise AssertionError("httpx's general request building")

    monkeypatch.setattr(httpx.AsyncClient, "build_request", general)
    recorder = Recorder()
    client = DataplaneClient("http://dp.test:5555", "admin", "pw", transport=recorder)
    parsed_url.cache_clear()
    for version in range(1, 4):
        await client.replace_server("be", "s1", {"name": "s1", "address": "10.0.0.1"}, version=version)
    assert parsed_url.cache_info().misses == 1
    assert [r.url.params["version"] for r in recorder.requests] == ["1", "2", "3"]
    await client.aclose()


async def test_multipart_uploads_and_a_client_holding_cookies_go_through_httpx() -> None:
    recorder = Recorder()
    client = DataplaneClient("http://dp.test:5555", "admin", "pw", transport=recorder)
    await client.create_storage_file("general", "a.txt", "x")
    assert recorder.requests[-1].headers["Content-Type"].startswith("multipart/form-data; boundary=")
    client.http.cookies.set("s", "1", domain="dp.test")
    await client.replace_server("be", "s1", {"name": "s1"}, version=1)
    assert recorder.requests[-1].headers["Cookie"] == "s=1"
    await client.aclose()


def test_a_bool_parameter_is_refused_rather_than_spelt_otherwise_than_httpx() -> None:
    with pytest.raises(TypeError, match="not bool"):
        url_with_query("http://dp.test:5555/v3/services/haproxy/transactions/t1", {"force_reload": True})
