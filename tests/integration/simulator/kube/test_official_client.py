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


def test_error_bodies_are_the_api_servers_bytes(server: BackgroundServer, tmp_path: Any) -> None:
    """The client's own e2e tests compare these strings: no ``details.group`` for core kinds, the group for
    the others, Go's field order and the encoder's trailing newline."""
    from kubernetes import utils

    api_client = client.ApiClient(client.Configuration())
    api_client.configuration.host = server.url
    manifest = tmp_path / "svc.yaml"
    manifest.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: mock-2, namespace: default}\n"
                        "spec: {ports: [{port: 80}]}\n---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\n"
                        "metadata: {name: haproxy}\nspec: {controller: haproxy.org/ingress}\n")
    utils.create_from_yaml(api_client, str(manifest))
    with pytest.raises(utils.FailToCreateError) as info:
        utils.create_from_yaml(api_client, str(manifest))
    assert str(info.value) == (
        'Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"services \\"mock-2\\" already exists","reason":"AlreadyExists","details":{"name":"mock-2",'
        '"kind":"services"},"code":409}\n'
        'Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"ingressclasses.networking.k8s.io \\"haproxy\\" already exists","reason":"AlreadyExists",'
        '"details":{"name":"haproxy","group":"networking.k8s.io","kind":"ingressclasses"},"code":409}\n')
