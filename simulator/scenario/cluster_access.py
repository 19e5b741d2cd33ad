"""How the ``cluster`` scenario backend reaches an installation: its options and its HTTP views.

``ClusterOptions`` says where things are (``from_env`` reads the ``HAPTIC_CLUSTER_*`` variables, see
the README's "Running scenarios on a cluster"). What cannot be reached directly (a Kind cluster's pod
IPs from the host) is reached through ``kubectl port-forward`` (``PortForward``). ``PodView`` is one
HAProxy pod as its Dataplane API shows it (only documented v3 endpoints: raw configuration, its
version, the reload list, storage), ``ControllerView`` one controller replica as its debug server
shows it (``/debug/events``, ``/debug/vars/leader``, ``/metrics``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

EchoMode = Literal["pods", "local"]
AccessMode = Literal["direct", "port-forward"]


class AccessError(RuntimeError):
    """The installation cannot be reached as configured; the message says what to set."""


def _split(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@dataclass(frozen=True)
class ClusterOptions:
    kubeconfig: str | None = None
    context: str | None = None
    #: plain API server URL without credentials (fakes); overrides the kubeconfig
    server: str | None = None
    namespace: str = "haptic-system"
    config_name: str = "haptic-config"
    #: the controllers' debug servers (``http://host:port``), one per replica; empty: port-forward to each
    #: controller pod (``controller_selector``) on ``controller_debug_port``
    controller_urls: tuple[str, ...] = ()
    controller_selector: str = "app.kubernetes.io/name=haptic-controller"
    controller_debug_port: int = 8080
    #: ``host:port`` where HTTP traffic enters HAProxy (a NodePort); empty: each pod's IP at the port of
    #: its config's first wildcard bind (pods reachable: the local stack, a runner inside the cluster)
    traffic_address: str | None = None
    #: the Dataplane API of each pod: at its IP (``direct``) or through ``kubectl port-forward``
    dataplane: AccessMode = "direct"
    #: endpoints of the scenario's EndpointSlices become echo servers: Pods running ``echo_image``
    #: (``pods``), or servers on this machine's loopback (``local``: HAProxy runs on this machine)
    echo: EchoMode = "pods"
    echo_image: str = "haptic:dev"
    echo_namespace: str = "default"
    kubectl: str = "kubectl"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ClusterOptions:
        e = dict(os.environ if env is None else env)

        def get(name: str, default: str = "") -> str:
            return e.get(f"HAPTIC_CLUSTER_{name}", default)

        dataplane = get("DATAPLANE", "direct")
        echo = get("ECHO", "pods")
        if dataplane not in ("direct", "port-forward"):
            raise AccessError(f"HAPTIC_CLUSTER_DATAPLANE={dataplane!r}: expected direct or port-forward")
        if echo not in ("pods", "local"):
            raise AccessError(f"HAPTIC_CLUSTER_ECHO={echo!r}: expected pods or local")
        return cls(
            kubeconfig=get("KUBECONFIG") or e.get("KUBECONFIG") or None,
            context=get("CONTEXT") or None,
            server=get("SERVER") or None,
            namespace=get("NAMESPACE", "haptic-system"),
            config_name=get("CONFIG", "haptic-config"),
            controller_urls=_split(get("CONTROLLER_URLS")),
            traffic_address=get("TRAFFIC") or None,
            dataplane=dataplane,  # type: ignore[arg-type]
            echo=echo,  # type: ignore[arg-type]
            echo_image=get("ECHO_IMAGE", "haptic:dev"),
        )


_FORWARDING = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+) ->")


class PortForward:
    """``kubectl port-forward pod/NAME :PORT`` on 127.0.0.1; ``local`` is ``127.0.0.1:<picked port>``."""

    def __init__(self, options: ClusterOptions, namespace: str, pod: str, port: int) -> None:
        self.options = options
        self.namespace = namespace
        self.pod = pod
        self.port = port
        self.local = ""
        self._process: asyncio.subprocess.Process | None = None

    async def start(self, within: float = 30.0) -> str:
        command = [self.options.kubectl]
        if self.options.kubeconfig:
            command += ["--kubeconfig", self.options.kubeconfig]
        if self.options.context:
            command += ["--context", self.options.context]
        command += ["-n", self.namespace, "port-forward", "--address", "127.0.0.1", f"pod/{self.pod}", f":{self.port}"]
        self._process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                             stderr=asyncio.subprocess.STDOUT)
        assert self._process.stdout is not None
        try:
            async with asyncio.timeout(within):
                while True:
                    line = (await self._process.stdout.readline()).decode(errors="replace")
                    if not line:
                        raise AccessError(f"kubectl port-forward to {self.namespace}/{self.pod}:{self.port} exited")
                    match = _FORWARDING.search(line)
                    if match:
                        self.local = f"127.0.0.1:{match[1]}"
                        return self.local
        except TimeoutError:
            await self.stop()
            raise AccessError(f"kubectl port-forward to {self.namespace}/{self.pod}:{self.port}: no port "
                              f"within {within:g}s") from None

    async def stop(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            with contextlib.suppress(TimeoutError, ProcessLookupError):
                async with asyncio.timeout(5):
                    await self._process.wait()
        self._process = None


def strip_version(raw: str) -> str:
    """The configuration as pushed: without the Dataplane API's own ``# _version=N`` line."""
    return "".join(line for line in raw.splitlines(keepends=True) if not line.startswith("# _version="))


@dataclass
class PodState:
    """What one refresh read from a pod (``None`` fields: not readable this time)."""

    config: str | None = None
    version: int | None = None
    reload_ids: frozenset[str] = frozenset()
    files: dict[str, str] = field(default_factory=dict)


class PodView:
    """One HAProxy pod's Dataplane API (Basic auth with the installation's credentials)."""

    _STORAGE = (("maps", True), ("general", True), ("ssl_certificates", False))

    def __init__(self, name: str, base_url: str, client: httpx.AsyncClient, auth: tuple[str, str]) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self._client = client
        self._auth = auth

    async def _get(self, path: str) -> httpx.Response:
        return await self._client.get(f"{self.base_url}{path}", auth=self._auth)

    async def read(self) -> PodState:
        state = PodState()
        try:
            raw = await self._get("/services/haproxy/configuration/raw")
            if raw.status_code == 200:
                text = raw.text
                if raw.headers.get("content-type", "").startswith("application/json"):
                    body: Any = raw.json()
                    text = str(body.get("data", "")) if isinstance(body, dict) else text
                state.config = strip_version(text)
            version = await self._get("/services/haproxy/configuration/version")
            if version.status_code == 200:
                state.version = int(version.text.strip())
            reloads = await self._get("/services/haproxy/reloads")
            if reloads.status_code == 200:
                state.reload_ids = frozenset(str(r.get("id")) for r in reloads.json()
                                             if r.get("status") in ("succeeded", "failed"))
            for kind, readable in self._STORAGE:
                listing = await self._get(f"/services/haproxy/storage/{kind}")
                if listing.status_code != 200:
                    continue
                for item in listing.json() or []:
                    name = str(item.get("storage_name") or "")
                    if not readable:
                        state.files[name] = ""  # the API serves a certificate's metadata, never its PEM
                        continue
                    content = await self._get(f"/services/haproxy/storage/{kind}/{name}")
                    if content.status_code == 200:
                        state.files[name] = content.text
        except (httpx.HTTPError, ValueError):
            pass  # a pod restarting or unreachable for a moment: the next refresh reads it again
        return state


class ControllerView:
    """One controller replica's debug server."""

    def __init__(self, index: int, base_url: str, client: httpx.AsyncClient) -> None:
        self.index = index
        self.base_url = base_url.rstrip("/")
        self._client = client

    async def events(self, limit: int = 1000) -> list[dict[str, Any]]:
        try:
            response = await self._client.get(f"{self.base_url}/debug/events?limit={limit}")
            if response.status_code != 200:
                return []
            items = response.json().get("events") or []
        except (httpx.HTTPError, ValueError):
            return []
        return [i for i in items if isinstance(i, dict)]

    async def is_leader(self) -> bool:
        try:
            response = await self._client.get(f"{self.base_url}/debug/vars/leader")
            body = response.json() if response.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return False
        value = body.get("value", body) if isinstance(body, dict) else {}
        return bool(isinstance(value, dict) and value.get("is_leader"))

    async def convergence(self) -> Mapping[str, Any] | None:
        """``/debug/vars/convergence``: whether this replica leads and what it still has to do (None: unreadable)."""
        try:
            response = await self._client.get(f"{self.base_url}/debug/vars/convergence")
            body = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        value = body.get("value", body) if isinstance(body, dict) else None
        return value if isinstance(value, dict) else None

    async def metrics(self) -> str:
        try:
            response = await self._client.get(f"{self.base_url}/metrics")
        except httpx.HTTPError:
            return ""
        return response.text if response.status_code == 200 else ""
