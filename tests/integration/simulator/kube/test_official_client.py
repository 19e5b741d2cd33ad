"""The official ``kubernetes`` client: list + watch from the list's version, resume after a dropped
stream, re-list after a 410."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from simulator.kube import BackgroundServer
from tests.integration.kube_helpers import wait_until


@pytest.fixture
def server() -> Any:
    with BackgroundServer() as srv:
        yield srv


@pytest.fixture
def core(server: BackgroundServer) -> client.CoreV1Api:
    config = client.Configuration()
    config.host = server.url
    return client.CoreV1Api(client.ApiClient(config))


def test_create_get_conflict(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert created.metadata.uid
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    assert info.value.status == 409
    stale = core.read_namespaced_config_map("a", "default")
    core.patch_namespaced_config_map("a", "default", {"data": {"k": "v2"}})
    stale.data = {"k": "v3"}
    with pytest.raises(ApiException) as info:
        core.replace_namespaced_config_map("a", "default", stale)
    assert info.value.status == 409
    assert core.read_namespaced_config_map("a", "default").data == {"k": "v2"}


def test_list_watch_resume_and_relist(server: BackgroundServer, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "first"}})
    listed = core.list_namespaced_config_map("default")
    rv = listed.metadata.resource_version
    assert [i.metadata.name for i in listed.items] == ["first"]

    seen: list[tuple[str, str]] = []
    log: list[str] = []
    hold = threading.Event()
    resume = threading.Event()

    def consume() -> None:
        nonlocal rv
        w = watch.Watch()
        while not seen or seen[-1] != ("ADDED", "fourth"):
            try:
                for event in w.stream(core.list_namespaced_config_map, "default", resource_version=rv,
                                      timeout_seconds=30, allow_watch_bookmarks=True):
                    rv = event["object"].metadata.resource_version
                    if event["type"] != "BOOKMARK":
                        seen.append((event["type"], event["object"].metadata.name))
                    if seen and seen[-1] == ("ADDED", "fourth"):
                        return
            except urllib3.exceptions.ProtocolError:
                log.append("dropped")
                if hold.is_set():
                    resume.wait(20)
            except ApiException as exc:
                log.append(str(exc.status))
                relisted = core.list_namespaced_config_map("default")
                rv = relisted.metadata.resource_version
                seen.extend(("LISTED", i.metadata.name) for i in relisted.items)

    def watching() -> bool:
        return bool(server.call(lambda api: api.watcher_count() == 1))

    consumer = threading.Thread(target=consume)
    consumer.start()
    wait_until(watching, what="the first watch")
    core.patch_namespaced_config_map("first", "default", {"data": {"a": "1"}})
    wait_until(lambda: len(seen) == 1, what="MODIFIED first")
    server.call(lambda api: api.drop_watches())
    wait_until(lambda: log == ["dropped"] and watching(), what="the resumed watch")
    core.create_namespaced_config_map("default", {"metadata": {"name": "second"}})
    wait_until(lambda: len(seen) == 2, what="ADDED second")
    hold.set()
    server.call(lambda api: api.drop_watches())
    wait_until(lambda: log == ["dropped", "dropped"], what="the second drop")
    core.create_namespaced_config_map("default", {"metadata": {"name": "third"}})
    server.call(lambda api: api.compact())
    resume.set()
    wait_until(lambda: "410" in log and watching(), what="the re-list after 410")
    core.create_namespaced_config_map("default", {"metadata": {"name": "fourth"}})
    consumer.join(30)
    assert not consumer.is_alive()
    assert log == ["dropped", "dropped", "410"]
    assert seen == [("MODIFIED", "first"), ("ADDED", "second"), ("LISTED", "first"), ("LISTED", "second"),
                    ("LISTED", "third"), ("ADDED", "fourth")]
