"""One local HAProxy "pod": a fake Dataplane API on ``<podIP>:<port>`` driving a real haproxy.

A Kubernetes pod has its own filesystem and network; a local one borrows both from the host. The
pod's haproxy therefore reads a translated copy of every pushed config (the API keeps serving the
text as pushed): the storage root ``/etc/haproxy`` becomes the pod's storage directory, and
wildcard ``bind``s (``*:8080``, ``:8080``, ``0.0.0.0:8080``, ``[::]:8080``) bind the pod's own
loopback address, so that several pods can run the same config side by side.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from haptic.k8s.api import JSON
from simulator.dataplane.haproxy_driver import HAProxyDriver
from simulator.dataplane.http_server import RunningServer, serve
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from simulator.dataplane.local_version import local_api_version
from simulator.dataplane.process_runner import AsyncProcessRunner, ProcessRunner
from simulator.dataplane.storage import Storage

VIRTUAL_ROOT = "/etc/haproxy"
# Unix socket paths are limited to about 100 bytes (haproxy says "max 97"); deep work directories
# (pytest's tmp_path) get their sockets in a short temporary directory instead.
_SOCKET_PATH_MAX = 90
POD_LABELS = {"app.kubernetes.io/name": "haproxy", "app.kubernetes.io/component": "loadbalancer"}

_WILDCARD_BIND = re.compile(r"^(?P<lead>[ \t]*bind[ \t]+)(?:\*|0\.0\.0\.0|\[::\]|::)?:(?P<port>\d+)(?=[\s,]|$)",
                            re.MULTILINE)


def translate_for_pod(text: str, *, pod_ip: str, storage_root: str, virtual_root: str = VIRTUAL_ROOT) -> str:
    """The config as this pod's haproxy must read it (see the module docstring)."""
    root = re.compile(rf"(?<![\w./-]){re.escape(virtual_root.rstrip('/'))}(?=/|[\s\"']|$)", re.MULTILINE)
    text = root.sub(lambda _m: storage_root.rstrip("/"), text)
    return _WILDCARD_BIND.sub(lambda m: f"{m['lead']}{pod_ip}:{m['port']}", text)


class PodHAProxyDriver(HAProxyDriver):
    """``HAProxyDriver`` whose haproxy sees the pod's filesystem and address (``translate_for_pod``)."""

    def __init__(self, haproxy_bin: str, workdir: Path, runner: ProcessRunner, *, pod_ip: str,
                 storage_root: Path, virtual_root: str = VIRTUAL_ROOT, reload_wait: float = 10.0) -> None:
        super().__init__(haproxy_bin, workdir, runner, reload_wait=reload_wait)
        self.pod_ip = pod_ip
        self.storage_root = str(storage_root)
        self.virtual_root = virtual_root

    def translate(self, text: str) -> str:
        return translate_for_pod(text, pod_ip=self.pod_ip, storage_root=self.storage_root,
                                 virtual_root=self.virtual_root)

    async def check(self, text: str) -> str | None:
        return await super().check(self.translate(text))

    async def start(self, text: str) -> None:
        await super().start(self.translate(text))

    async def reload(self, text: str) -> None:
        await super().reload(self.translate(text))


class LocalHAProxyPod:
    """A fake Dataplane instance with a real haproxy, served on ``ip:dataplane_port``.

    ``pod_object()`` is the Pod the controller discovers: ``Running``, ``status.podIP`` = ``ip``, a
    ready ``dataplane`` container exposing ``dataplane_port``.
    """

    def __init__(self, name: str, ip: str, dataplane_port: int, workdir: Path, *, haproxy_bin: str,
                 namespace: str = "haptic", username: str = "admin", password: str = "adminpwd",
                 reload_delay: float = 0.2, labels: dict[str, str] | None = None) -> None:
        self.name = name
        self.ip = ip
        self.dataplane_port = dataplane_port
        self.namespace = namespace
        self.labels = dict(labels or POD_LABELS)
        storage_root = workdir / "storage"
        self.storage = Storage(storage_root, virtual_root=VIRTUAL_ROOT)
        haproxy_dir = workdir / "haproxy"
        self._short_dir: str | None = None
        if len(str(haproxy_dir / "master.sock")) > _SOCKET_PATH_MAX:
            self._short_dir = tempfile.mkdtemp(prefix="haptic-pod-")
            haproxy_dir = Path(self._short_dir)
        self.driver = PodHAProxyDriver(haproxy_bin, haproxy_dir, AsyncProcessRunner(), pod_ip=ip,
                                       storage_root=storage_root)
        # The controller admits only Dataplanes reporting its own haproxy's major.minor.
        options = InstanceOptions(name=name, username=username, password=password, reload_delay=reload_delay,
                                  api_version=local_api_version(haproxy_bin))
        self.fake = FakeDataplane(options, driver=self.driver, storage=self.storage)
        self._server: RunningServer | None = None
        self.restarts = 0

    def __repr__(self) -> str:
        return f"LocalHAProxyPod({self.name!r}, {self.ip}, dataplane port {self.dataplane_port})"

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.dataplane_port}/v3"

    @property
    def log_path(self) -> Path:
        return self.driver.workdir / "haproxy.log"

    async def start(self) -> None:
        await self.fake.start()
        try:
            self._server = await serve(self.fake, host=self.ip, port=self.dataplane_port)
        except BaseException:
            self.driver.stop()
            raise

    async def stop_api(self) -> None:
        """The Dataplane API stops listening: connections are refused (haproxy keeps serving traffic)."""
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop()

    async def start_api(self) -> None:
        """The Dataplane API listens again on its address, with the state it had."""
        if self._server is None:
            self._server = await serve(self.fake, host=self.ip, port=self.dataplane_port)

    async def stop(self) -> None:
        try:
            if self._server is not None:
                server, self._server = self._server, None
                await server.stop()
            await self.fake.aclose()
        finally:
            self.kill()

    def kill(self) -> None:
        """Stops haproxy now (synchronous: also usable from an ``atexit`` hook); idempotent."""
        self.driver.stop()
        if self._short_dir is not None:
            shutil.rmtree(self._short_dir, ignore_errors=True)
            self._short_dir = None

    async def worker_pids(self) -> list[int]:
        return await self.driver.worker_pids()

    def counters(self) -> dict[str, int]:
        return self.fake.counters.as_json()

    def pod_object(self, http_port: int | None = None) -> JSON:
        haproxy_ports: list[dict[str, Any]] = [{"name": "http", "containerPort": http_port}] if http_port else []
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": dict(self.labels)},
            "spec": {"containers": [
                {"name": "haproxy", "image": "haproxytech/haproxy-debian:local", "ports": haproxy_ports},
                {"name": "dataplane", "image": "haptic-sim/dataplane:local",
                 "ports": [{"name": "dataplane", "containerPort": self.dataplane_port}]},
            ]},
            "status": {
                "phase": "Running",
                "podIP": self.ip,
                "podIPs": [{"ip": self.ip}],
                "hostIP": self.ip,
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {"name": "haproxy", "ready": True, "restartCount": self.restarts},
                    {"name": "dataplane", "ready": True, "restartCount": self.restarts},
                ],
            },
        }
