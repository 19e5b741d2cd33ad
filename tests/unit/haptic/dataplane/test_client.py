"""DataplaneClient against respx mocks: every status code the reference lists for the endpoints used."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from haptic.dataplane import api_errors as errors
from haptic.dataplane.client import STORAGE_GENERAL, STORAGE_MAPS, STORAGE_SSL, DataplaneClient, RetryPolicy

BASE = "http://dp.test:5555/v3"
CFG = f"{BASE}/services/haproxy/configuration"
STORAGE = f"{BASE}/services/haproxy/storage"


class FakeSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []
        self.now = 0.0

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds


@pytest.fixture
def sleeper() -> FakeSleep:
    return FakeSleep()


@pytest.fixture
async def client(sleeper: FakeSleep) -> DataplaneClient:
    c = DataplaneClient("http://dp.test:5555", "admin", "s3cret-pw", sleep=sleeper, clock=lambda: sleeper.now)
    yield c  # type: ignore[misc]
    await c.aclose()


def err(status: int, message: str) -> httpx.Response:
    return httpx.Response(status, json={"code": status, "message": message})


@respx.mock
async def test_basic_auth_on_every_request_and_secret_not_in_repr(client: DataplaneClient) -> None:
    route = respx.get(f"{CFG}/version").mock(return_value=httpx.Response(200, text="7\n"))
    assert await client.get_version() == 7
    assert route.calls.last.request.headers["Authorization"] == "Basic YWRtaW46czNjcmV0LXB3"
    assert "s3cret" not in repr(client)


@pytest.mark.parametrize("base", ["http://dp.test:5555", "http://dp.test:5555/v3", "http://dp.test:5555/v2/"])
def test_base_url_normalised(base: str) -> None:
    assert DataplaneClient(base, "u", "p").base_url == BASE


@respx.mock
async def test_info_parses_version(client: DataplaneClient) -> None:
    respx.get(f"{BASE}/info").mock(return_value=httpx.Response(200, json={"api": {"version": "v3.2.6 87ad0bcf"}}))
    info = await client.info()
    assert (info.major, info.minor, info.enterprise, info.version) == (3, 2, False, "3.2.6")


@respx.mock
async def test_info_enterprise_and_errors(client: DataplaneClient) -> None:
    respx.get(f"{BASE}/info").mock(return_value=httpx.Response(200, json={"api": {"version": "v3.1r1-ee2 abc"}}))
    info = await client.info()
    assert (info.major, info.minor, info.enterprise) == (3, 1, True)
    respx.get(f"{BASE}/info").mock(return_value=err(401, "unauthorized"))
    with pytest.raises(errors.AuthenticationError, match="401"):
        await client.info()
    respx.get(f"{BASE}/info").mock(return_value=httpx.Response(200, json={"api": {"version": "garbage"}}))
    with pytest.raises(errors.DataplaneHTTPError, match="unparseable"):
        await client.info()


@respx.mock
async def test_version_errors(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/version").mock(return_value=httpx.Response(200, text="nope"))
    with pytest.raises(errors.DataplaneHTTPError, match="not an integer"):
        await client.get_version()
    respx.get(f"{CFG}/version").mock(return_value=err(500, "boom"))
    with pytest.raises(errors.DataplaneHTTPError) as info:
        await client.get_version()
    assert info.value.status == 500 and info.value.message == "boom"


@respx.mock
async def test_raw_get_reads_version_from_header_or_first_line(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/raw").mock(
        return_value=httpx.Response(200, text="# _version=4\nglobal\n", headers={"Configuration-Version": "4"})
    )
    raw = await client.get_raw_config()
    assert (raw.version, raw.text) == (4, "# _version=4\nglobal\n")
    respx.get(f"{CFG}/raw").mock(return_value=httpx.Response(200, text="# _version=9\nglobal\n"))
    assert (await client.get_raw_config()).version == 9
    respx.get(f"{CFG}/raw").mock(return_value=httpx.Response(200, text="global\n"))
    assert (await client.get_raw_config()).version == 1
    respx.get(f"{CFG}/raw").mock(return_value=httpx.Response(500, text='{"code":500,"message":"io"}'))
    with pytest.raises(errors.DataplaneHTTPError, match="io"):
        await client.get_raw_config()


@respx.mock
async def test_raw_post_statuses(client: DataplaneClient) -> None:
    route = respx.post(f"{CFG}/raw").mock(
        return_value=httpx.Response(
            202, text="global\n", headers={"Reload-ID": "2026-01-01-3", "Configuration-Version": "6"}
        )
    )
    out = await client.post_raw_config("global\n", 5)
    assert (out.status, out.reload_id, out.version) == (202, "2026-01-01-3", 6)
    request = route.calls.last.request
    assert request.url.params["version"] == "5" and request.content == b"global\n"
    assert request.headers["Content-Type"] == "text/plain"
    respx.post(f"{CFG}/raw").mock(return_value=httpx.Response(201, text="global\n"))
    assert (await client.post_raw_config("global\n", 5)).reload_id is None
    # Raw errors come as text/plain holding the JSON error.
    respx.post(f"{CFG}/raw").mock(
        return_value=httpx.Response(400, text=json.dumps({"code": 400, "message": "line 3: bad"}))
    )
    with pytest.raises(errors.ValidationError, match="line 3: bad"):
        await client.post_raw_config("global\n", 5)
    respx.post(f"{CFG}/raw").mock(return_value=err(409, "version mismatch"))
    with pytest.raises(errors.VersionConflictError):
        await client.post_raw_config("global\n", 5)


@respx.mock
async def test_with_version_retries_conflicts_with_a_fresh_version(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/version").mock(side_effect=[httpx.Response(200, text="8"), httpx.Response(200, text="9")])
    route = respx.post(f"{CFG}/raw").mock(
        side_effect=[err(409, "mismatch"), err(409, "mismatch"), httpx.Response(202, headers={"Reload-ID": "r"})]
    )
    result = await client.with_version(lambda v: client.post_raw_config("global\n", v), 7)
    assert [c.request.url.params["version"] for c in route.calls] == ["7", "8", "9"]
    assert (result.version, result.retries, result.outcome.reload_id) == (9, 2, "r")
    assert client.stats.conflict_retries == 2


@respx.mock
async def test_with_version_is_bounded(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/version").mock(return_value=httpx.Response(200, text="8"))
    route = respx.post(f"{CFG}/raw").mock(return_value=err(409, "mismatch"))
    with pytest.raises(errors.VersionConflictError):
        await client.with_version(lambda v: client.post_raw_config("global\n", v), 7)
    assert route.call_count == 1 + client.retry.conflict_retries


@respx.mock
async def test_server_replace_runtime_and_reload(client: DataplaneClient) -> None:
    url = f"{CFG}/backends/web/servers/s1"
    route = respx.put(url).mock(return_value=httpx.Response(200, json={"name": "s1"}))
    out = await client.replace_server("web", "s1", {"name": "s1", "address": "10.0.0.2", "port": 80}, version=3)
    assert out.status == 200 and not out.reload_scheduled
    assert json.loads(route.calls.last.request.content)["address"] == "10.0.0.2"
    assert route.calls.last.request.url.params["version"] == "3"
    respx.put(url).mock(return_value=httpx.Response(202, json={}, headers={"Reload-ID": "2026-01-01-1"}))
    out = await client.replace_server("web", "s1", {"name": "s1"}, transaction_id="t1")
    assert out.reload_scheduled and out.reload_id == "2026-01-01-1"
    for status, exc in [(404, errors.NotFoundError), (409, errors.VersionConflictError), (400, errors.ValidationError)]:
        respx.put(url).mock(return_value=err(status, "x"))
        with pytest.raises(exc):
            await client.replace_server("web", "s1", {"name": "s1"}, version=3)
    with pytest.raises(ValueError):
        await client.replace_server("web", "s1", {}, version=1, transaction_id="t")


@respx.mock
async def test_transaction_lifecycle(client: DataplaneClient) -> None:
    respx.post(f"{BASE}/services/haproxy/transactions").mock(
        return_value=httpx.Response(201, json={"_version": 4, "id": "abc", "status": "in_progress"})
    )
    tx = await client.start_transaction(4)
    assert (tx.id, tx.version, tx.status) == ("abc", 4, "in_progress")
    commit = respx.put(f"{BASE}/services/haproxy/transactions/abc").mock(
        return_value=httpx.Response(202, json={"status": "success"}, headers={"Reload-ID": "r1"})
    )
    assert (await client.commit_transaction("abc")).reload_id == "r1"
    assert commit.calls.last.request.url.params["force_reload"] == "false"
    respx.put(f"{BASE}/services/haproxy/transactions/abc").mock(return_value=httpx.Response(200, json={}))
    assert (await client.commit_transaction("abc", force_reload=True)).status == 200
    respx.delete(f"{BASE}/services/haproxy/transactions/abc").mock(return_value=httpx.Response(204))
    await client.abort_transaction("abc")
    respx.delete(f"{BASE}/services/haproxy/transactions/abc").mock(return_value=err(404, "gone"))
    await client.abort_transaction("abc")  # 404 on abort counts as aborted
    respx.get(f"{BASE}/services/haproxy/transactions").mock(
        return_value=httpx.Response(200, json=[{"_version": 4, "id": "abc", "status": "outdated"}])
    )
    assert [(t.id, t.status) for t in await client.list_transactions()] == [("abc", "outdated")]


@pytest.mark.parametrize(
    ("status", "exc"),
    [(409, errors.VersionConflictError), (406, errors.VersionConflictError), (429, errors.TooManyTransactionsError)],
)
@respx.mock
async def test_transaction_start_errors(client: DataplaneClient, status: int, exc: type[Exception]) -> None:
    respx.post(f"{BASE}/services/haproxy/transactions").mock(return_value=err(status, "no"))
    with pytest.raises(exc):
        await client.start_transaction(1)


@pytest.mark.parametrize(
    ("status", "exc"),
    [
        (406, errors.VersionConflictError),
        (409, errors.VersionConflictError),
        (404, errors.NotFoundError),
        (400, errors.ValidationError),
    ],
)
@respx.mock
async def test_transaction_commit_errors(client: DataplaneClient, status: int, exc: type[Exception]) -> None:
    respx.put(f"{BASE}/services/haproxy/transactions/t").mock(return_value=err(status, "no"))
    with pytest.raises(exc):
        await client.commit_transaction("t")


@respx.mock
async def test_run_transaction_retries_outdated_commit_after_abort(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/version").mock(side_effect=[httpx.Response(200, text="1"), httpx.Response(200, text="2")])
    start = respx.post(f"{BASE}/services/haproxy/transactions").mock(
        side_effect=[
            httpx.Response(201, json={"_version": 1, "id": "t1", "status": "in_progress"}),
            httpx.Response(201, json={"_version": 2, "id": "t2", "status": "in_progress"}),
        ]
    )
    respx.put(f"{BASE}/services/haproxy/transactions/t1").mock(return_value=err(406, "outdated"))
    respx.put(f"{BASE}/services/haproxy/transactions/t2").mock(
        return_value=httpx.Response(202, json={}, headers={"Reload-ID": "r"})
    )
    abort = respx.delete(f"{BASE}/services/haproxy/transactions/t1").mock(return_value=httpx.Response(204))
    seen: list[str] = []

    async def body(tid: str) -> None:
        seen.append(tid)

    result = await client.run_transaction(body)
    assert seen == ["t1", "t2"] and abort.called
    assert [c.request.url.params["version"] for c in start.calls] == ["1", "2"]
    assert (result.transaction_id, result.retries, result.outcome.reload_id) == ("t2", 1, "r")


@respx.mock
async def test_run_transaction_aborts_on_body_error(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/version").mock(return_value=httpx.Response(200, text="1"))
    respx.post(f"{BASE}/services/haproxy/transactions").mock(
        return_value=httpx.Response(201, json={"_version": 1, "id": "t1", "status": "in_progress"})
    )
    abort = respx.delete(f"{BASE}/services/haproxy/transactions/t1").mock(return_value=httpx.Response(204))

    async def body(tid: str) -> None:
        raise errors.ValidationError("POST", "/x", 400, "bad model")

    with pytest.raises(errors.ValidationError):
        await client.run_transaction(body)
    assert abort.call_count == 1


@respx.mock
async def test_connection_errors_retry_with_backoff(client: DataplaneClient, sleeper: FakeSleep) -> None:
    route = respx.get(f"{CFG}/version").mock(
        side_effect=[httpx.ConnectError("refused"), httpx.ConnectError("refused"), httpx.Response(200, text="2")]
    )
    assert await client.get_version() == 2
    assert route.call_count == 3 and sleeper.calls == [0.1, 0.2]
    assert client.stats.connection_retries == 2


@respx.mock
async def test_connection_errors_give_up(client: DataplaneClient, sleeper: FakeSleep) -> None:
    respx.get(f"{CFG}/version").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(errors.DataplaneConnectionError):
        await client.get_version()
    assert len(sleeper.calls) == client.retry.connect_attempts - 1


@respx.mock
async def test_writes_are_not_repeated_after_a_read_error(sleeper: FakeSleep) -> None:
    c = DataplaneClient(BASE, "u", "p", sleep=sleeper, retry=RetryPolicy(connect_attempts=5))
    route = respx.post(f"{CFG}/raw").mock(side_effect=httpx.ReadError("reset"))
    with pytest.raises(errors.DataplaneConnectionError):
        await c.post_raw_config("global\n", 1)
    assert route.call_count == 1
    await c.aclose()


@respx.mock
async def test_timeouts_are_connection_errors(client: DataplaneClient) -> None:
    respx.get(f"{CFG}/raw").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(errors.DataplaneConnectionError, match="timed out"):
        await client.get_raw_config()


@respx.mock
async def test_reload_polling(client: DataplaneClient, sleeper: FakeSleep) -> None:
    respx.get(f"{BASE}/services/haproxy/reloads/r1").mock(
        side_effect=[
            err(404, "unknown"),
            httpx.Response(200, json={"id": "r1", "status": "in_progress"}),
            err(503, "busy"),
            httpx.Response(200, json={"id": "r1", "status": "succeeded"}),
        ]
    )
    status = await client.wait_for_reload("r1")
    assert status.status == "succeeded" and sleeper.calls == [0.5, 0.5, 0.5]


@respx.mock
async def test_reload_failed_and_timeout(client: DataplaneClient) -> None:
    respx.get(f"{BASE}/services/haproxy/reloads/r2").mock(
        return_value=httpx.Response(200, json={"id": "r2", "status": "failed", "response": "[ALERT] bad"})
    )
    with pytest.raises(errors.ReloadFailedError, match="ALERT"):
        await client.wait_for_reload("r2")
    respx.get(f"{BASE}/services/haproxy/reloads/r3").mock(
        return_value=httpx.Response(200, json={"id": "r3", "status": "in_progress"})
    )
    with pytest.raises(errors.ReloadTimeoutError):
        await client.wait_for_reload("r3", within=2.0)
    respx.get(f"{BASE}/services/haproxy/reloads/r4").mock(return_value=err(401, "no"))
    with pytest.raises(errors.AuthenticationError):
        await client.wait_for_reload("r4")


@respx.mock
async def test_storage_list_get_create_replace_delete(client: DataplaneClient) -> None:
    respx.get(f"{STORAGE}/maps").mock(
        return_value=httpx.Response(200, json=[{"storage_name": "host.map", "file": "/etc/haproxy/maps/host.map"}])
    )
    respx.get(f"{STORAGE}/general").mock(return_value=httpx.Response(200, json=[{"id": "503.http", "file": "/f"}]))
    assert [f.storage_name for f in await client.list_storage(STORAGE_MAPS)] == ["host.map"]
    assert [f.storage_name for f in await client.list_storage(STORAGE_GENERAL)] == ["503.http"]
    respx.get(f"{STORAGE}/maps/host.map").mock(return_value=httpx.Response(200, text="a.com web\n"))
    assert await client.get_storage_content(STORAGE_MAPS, "host.map") == "a.com web\n"

    create = respx.post(f"{STORAGE}/general").mock(return_value=httpx.Response(201, json={"storage_name": "x"}))
    out = await client.create_storage_file(STORAGE_GENERAL, "503.http", "HTTP/1.0 503\n")
    assert out.status == 201 and not out.reload_scheduled
    body = create.calls.last.request.content
    assert b'name="file_upload"; filename="503.http"' in body and b'name="id"' in body

    put_map = respx.put(f"{STORAGE}/maps/host.map").mock(return_value=httpx.Response(202, headers={"Reload-ID": "r9"}))
    assert (await client.replace_storage_file(STORAGE_MAPS, "host.map", "b.com x\n")).reload_id == "r9"
    assert put_map.calls.last.request.headers["Content-Type"] == "text/plain"
    put_gen = respx.put(f"{STORAGE}/general/503.http").mock(return_value=httpx.Response(202))
    await client.replace_storage_file(STORAGE_GENERAL, "503.http", "x")
    assert b"file_upload" in put_gen.calls.last.request.content

    respx.delete(f"{STORAGE}/maps/host.map").mock(return_value=httpx.Response(204))
    assert (await client.delete_storage_file(STORAGE_MAPS, "host.map")).status == 204


@pytest.mark.parametrize(
    ("method", "status", "exc"),
    [
        ("create", 409, errors.AlreadyExistsError),
        ("create", 400, errors.ValidationError),
        ("replace", 404, errors.NotFoundError),
        ("replace", 204, errors.DataplaneHTTPError),  # HAPTIC accepts only 200/202 on update
        ("delete", 409, errors.ReferencedFileError),
        ("delete", 404, errors.NotFoundError),
        ("get", 404, errors.NotFoundError),
    ],
)
@respx.mock
async def test_storage_errors(client: DataplaneClient, method: str, status: int, exc: type[Exception]) -> None:
    respx.route(url__startswith=f"{STORAGE}/maps").mock(return_value=err(status, "nope"))
    with pytest.raises(exc):
        if method == "create":
            await client.create_storage_file(STORAGE_MAPS, "m.map", "a b\n")
        elif method == "replace":
            await client.replace_storage_file(STORAGE_MAPS, "m.map", "a b\n")
        elif method == "delete":
            await client.delete_storage_file(STORAGE_MAPS, "m.map")
        else:
            await client.get_storage_content(STORAGE_MAPS, "m.map")


@respx.mock
async def test_ssl_certificate_create_runtime_or_reload(client: DataplaneClient) -> None:
    respx.post(f"{STORAGE}/ssl_certificates").mock(return_value=httpx.Response(201, json={}))
    assert (await client.create_storage_file(STORAGE_SSL, "a_com.pem", "PEM")).status == 201
    respx.post(f"{STORAGE}/ssl_certificates").mock(
        return_value=httpx.Response(202, json={}, headers={"Reload-ID": "2026-01-01-5"})
    )
    assert (await client.create_storage_file(STORAGE_SSL, "a_com.pem", "PEM")).reload_id == "2026-01-01-5"
    respx.put(f"{STORAGE}/ssl_certificates/a_com.pem").mock(
        return_value=httpx.Response(202, json={}, headers={"Reload-ID": "2026-01-01-6"})
    )
    assert (await client.replace_storage_file(STORAGE_SSL, "a_com.pem", "PEM")).reload_scheduled
    respx.put(f"{STORAGE}/ssl_certificates/a_com.pem").mock(return_value=httpx.Response(200, json={}))
    assert not (await client.replace_storage_file(STORAGE_SSL, "a_com.pem", "PEM")).reload_scheduled
    respx.get(f"{STORAGE}/ssl_certificates/a_com.pem").mock(
        return_value=httpx.Response(200, json={"serial": "12", "issuers": "CA"})
    )
    assert (await client.get_certificate_info("a_com.pem"))["serial"] == "12"
    respx.delete(f"{STORAGE}/ssl_certificates/a_com.pem").mock(return_value=httpx.Response(202))
    assert (await client.delete_storage_file(STORAGE_SSL, "a_com.pem")).status == 202


@respx.mock
async def test_runtime_map_entries(client: DataplaneClient) -> None:
    base = f"{BASE}/services/haproxy/runtime/maps/host.map/entries"
    respx.get(base).mock(return_value=httpx.Response(200, json=[{"key": "a.com", "value": "web", "id": "0x1"}]))
    assert [(e.key, e.value) for e in await client.list_map_entries("host.map")] == [("a.com", "web")]
    add = respx.post(base).mock(return_value=httpx.Response(201, json={}))
    await client.add_map_entry("host.map", "b.com", "api")
    assert add.calls.last.request.url.params["force_sync"] == "true"
    assert json.loads(add.calls.last.request.content) == {"key": "b.com", "value": "api"}
    respx.put(f"{base}/a.com").mock(return_value=httpx.Response(200, json={}))
    await client.replace_map_entry("host.map", "a.com", "web2")
    respx.delete(f"{base}/a.com").mock(return_value=httpx.Response(204))
    await client.delete_map_entry("host.map", "a.com")
    respx.post(base).mock(return_value=err(409, "exists"))
    with pytest.raises(errors.AlreadyExistsError):
        await client.add_map_entry("host.map", "b.com", "api")
    respx.delete(f"{base}/zzz").mock(return_value=err(404, "no entry"))
    with pytest.raises(errors.NotFoundError):
        await client.delete_map_entry("host.map", "zzz")


@respx.mock
async def test_map_keys_and_names_are_one_percent_encoded_path_segment(client: DataplaneClient) -> None:
    # Ingress map keys are host + path: a raw "/" would split the URL into more segments (404).
    key = "shop.example.com/api/v1/health?x=1#frag%20"
    encoded = "shop.example.com%2Fapi%2Fv1%2Fhealth%3Fx%3D1%23frag%2520"
    base = f"{BASE}/services/haproxy/runtime/maps/host.map/entries"
    put = respx.put(f"{base}/{encoded}").mock(return_value=httpx.Response(200, json={}))
    delete = respx.delete(f"{base}/{encoded}").mock(return_value=httpx.Response(204))
    await client.replace_map_entry("host.map", key, "web")
    await client.delete_map_entry("host.map", key)
    assert put.calls.last.request.url.raw_path.split(b"?")[0].endswith(encoded.encode())
    assert json.loads(put.calls.last.request.content) == {"value": "web"}  # the spec's body: value only
    assert delete.called
    get = respx.get(f"{CFG}/backends/be%2Fx/servers/s%201").mock(return_value=httpx.Response(200, json={}))
    await client.get_server("be/x", "s 1")
    assert get.called


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\tb", "a\x00b", "a\x85b", "a\u2028b", "a\u2029b", "a\x1cb",
                                   "a;b", "a#b", "a{b}", 'a"b', "a<b"])
def test_values_the_api_cannot_address_in_a_path(value: str) -> None:
    from haptic.dataplane.client import addressable

    assert not addressable(value)
    assert addressable("shop.example.com/api/v1/health") and addressable("a b+c%d")


@respx.mock
async def test_a_cookie_an_api_sets_is_sent_back_and_no_other_is_made_up(client: DataplaneClient) -> None:
    # (the jar is handed only the responses that set cookies: what it keeps must be what httpx's would)
    route = respx.get(f"{CFG}/version").mock(side_effect=[
        httpx.Response(200, text="7\n"), httpx.Response(200, text="8\n", headers={"Set-Cookie": "s=1; Path=/"}),
        httpx.Response(200, text="9\n")])
    assert [await client.get_version() for _ in range(3)] == [7, 8, 9]
    sent = [call.request.headers.get("Cookie") for call in route.calls]
    assert sent == [None, None, "s=1"]
    from haptic.dataplane.client import _Cookies

    assert type(client.http.cookies) is _Cookies  # the jar that skips responses without cookies is httpx's one


@respx.mock
async def test_a_request_goes_to_the_url_httpx_would_merge_from_base_path_and_parameters(
        client: DataplaneClient) -> None:
    route = respx.put(f"{CFG}/backends/be%2Fx/servers/s%201").mock(return_value=httpx.Response(200))
    await client.replace_server("be/x", "s 1", {"name": "s 1"}, version=3)
    await client.replace_server("be/x", "s 1", {"name": "s 1"}, transaction_id="a b&c")
    urls = [str(call.request.url) for call in route.calls]
    assert urls == [f"{CFG}/backends/be%2Fx/servers/s%201?version=3",
                    f"{CFG}/backends/be%2Fx/servers/s%201?transaction_id=a+b%26c"]
