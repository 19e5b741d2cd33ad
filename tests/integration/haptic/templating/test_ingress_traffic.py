"""The Ingress library's routing, proven with real traffic through a real HAProxy on 127.0.0.1."""

from __future__ import annotations

import base64
import contextlib
import datetime
import http.client
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from haptic.k8s.store import ResourceStore
from haptic.templating.context import StorageDirs
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateSet
from haptic.templating.libraries import load_library

pytestmark = pytest.mark.haproxy

LIB = load_library("ingress")


class _Spec:
    haproxy_config = LIB["haproxyConfig"]
    template_snippets = LIB["templateSnippets"]
    maps = LIB["maps"]
    files: dict[str, Any] = {}
    ssl_certificates: dict[str, Any] = {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _named_server(name: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"{name} {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def backends() -> Iterator[dict[str, int]]:
    servers = {name: _named_server(name) for name in ("svc-a", "svc-b")}
    yield {name: int(s.server_address[1]) for name, s in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()


def _path(path: str, kind: str, service: str) -> dict[str, Any]:
    return {"path": path, "pathType": kind, "backend": {"service": {"name": service, "port": {"number": 80}}}}


def _fixtures(ports: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    services, slices = [], []
    for name, port in ports.items():
        meta = {"namespace": "t", "name": name}
        services.append({"kind": "Service", "metadata": meta, "spec": {"ports": [{"port": 80}]}})
        slices.append(
            {
                "kind": "EndpointSlice",
                "metadata": {"namespace": "t", "name": f"{name}-1", "labels": {"kubernetes.io/service-name": name}},
                "ports": [{"port": port}],
                "endpoints": [{"addresses": ["127.0.0.1"]}],
            }
        )
    rules = [
        {
            "host": "a.test",
            "http": {
                "paths": [
                    _path("/", "Prefix", "svc-a"),
                    _path("/api", "Prefix", "svc-b"),
                    _path("/exact", "Exact", "svc-b"),
                ]
            },
        },
        {"host": "*.wild.test", "http": {"paths": [_path("/", "Prefix", "svc-b")]}},
        {"http": {"paths": [_path("/nohost", "Prefix", "svc-a")]}},
    ]
    ingress = {
        "kind": "Ingress",
        "metadata": {"namespace": "t", "name": "web"},
        "spec": {"ingressClassName": "haptic", "rules": rules},
    }
    return {"services": services, "endpoints": slices, "ingresses": [ingress]}


def _tls_secret() -> dict[str, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "a.test")])
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(7)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=36500))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("a.test")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    crt_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"namespace": "t", "name": "a-tls"},
        "data": {"tls.crt": base64.b64encode(crt_pem).decode(), "tls.key": base64.b64encode(key_pem).decode()},
    }


def _render(tmp_path: Path, ports: dict[str, int], http_port: int, https_port: int | None = None,
            fixtures: dict[str, list[dict[str, Any]]] | None = None, **settings: Any) -> Path:
    watched = LIB["watchedResources"]
    stores = {name: ResourceStore(name, w["indexBy"], w.get("fieldSelector")) for name, w in watched.items()}
    fixtures = fixtures or _fixtures(ports)
    if https_port is not None:
        fixtures["ingresses"][0]["spec"]["tls"] = [{"hosts": ["a.test"], "secretName": "a-tls"}]
        fixtures["secrets"] = [_tls_secret()]
    for name, objects in fixtures.items():
        for obj in objects:
            stores[name].apply(obj)
    extra = {**LIB["templatingSettings"]["extraContext"], "bindAddress": "127.0.0.1", "httpPort": http_port}
    extra["maxconn"] = 1000  # the default needs a higher fd limit than test machines grant
    extra["statsPort"] = _free_port()
    extra["httpsPort"] = https_port or _free_port()
    extra.update(settings)
    dirs = StorageDirs(
        maps_dir=str(tmp_path / "maps"),
        ssl_certs_dir=str(tmp_path / "ssl"),
        general_storage_dir=str(tmp_path / "general"),
    )
    engine = TemplateEngine(TemplateSet.from_spec(_Spec()))
    result = engine.render(RenderInputs(stores=stores, extra_context=extra, dirs=dirs))
    for directory, files in (
        ("maps", result.aux.maps),
        ("ssl", result.aux.certificates),
        ("general", {**result.aux.files, **result.aux.crt_lists}),
    ):
        (tmp_path / directory).mkdir()
        for name, content in files.items():
            (tmp_path / directory / name).write_text(content)
    config = tmp_path / "haproxy.cfg"
    config.write_text(result.config)
    return config


def _get(port: int, host: str, path: str, tls: bool = False) -> tuple[int, str]:
    conn: http.client.HTTPConnection
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers={"Host": host})
        response = conn.getresponse()
        body = response.read().decode()
        return response.status, response.getheader("Location") or body
    finally:
        conn.close()


@contextlib.contextmanager
def _haproxy(haproxy_bin: str, config: Path, port: int) -> Iterator[None]:
    check = subprocess.run([haproxy_bin, "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    proc = subprocess.Popen([haproxy_bin, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                time.sleep(0.05)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_host_and_path_routing_through_the_maps(haproxy_bin: str, tmp_path: Path, backends: dict[str, int]) -> None:
    http_port = _free_port()
    config = _render(tmp_path, backends, http_port)
    with _haproxy(haproxy_bin, config, http_port):
        cases = [
            ("a.test", "/", 200, "svc-a /"),
            ("a.test:8080", "/index.html", 200, "svc-a /index.html"),
            ("A.TEST", "/api", 200, "svc-b /api"),
            ("a.test", "/api/v1", 200, "svc-b /api/v1"),
            ("a.test", "/apix", 200, "svc-a /apix"),  # Prefix matches whole path elements only
            ("a.test", "/exact", 200, "svc-b /exact"),
            ("a.test", "/exact/more", 200, "svc-a /exact/more"),  # Exact is exact
            ("x.wild.test", "/anything", 200, "svc-b /anything"),
            # the host alone is computed only when the key missed: the wildcard still sees it without port and case
            ("X.Wild.Test:8080", "/anything", 200, "svc-b /anything"),
            ("a.b.wild.test", "/anything", 404, "no route"),  # a wildcard covers one label
            ("other.test", "/nohost/z", 200, "svc-a /nohost/z"),
            ("other.test", "/", 404, "no route"),
        ]
        for host, path, status, body in cases:
            assert _get(http_port, host, path) == (status, body), (host, path)


def test_tls_termination_and_redirect(haproxy_bin: str, tmp_path: Path, backends: dict[str, int]) -> None:
    http_port, https_port = _free_port(), _free_port()
    config = _render(tmp_path, backends, http_port, https_port)
    with _haproxy(haproxy_bin, config, https_port):
        assert _get(https_port, "a.test", "/api/x", tls=True) == (200, "svc-b /api/x")
        assert _get(http_port, "a.test", "/api/x") == (308, "https://a.test/api/x")


def _tenant_fixtures(ports: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """Namespace ``app`` (oldest) serves app.test from svc-a; namespace ``attacker`` (newer) tries every way
    to answer for app.test from svc-b: the same host and paths, a wildcard host, a rule without host and a
    defaultBackend."""
    services, slices = [], []
    for namespace, name in (("app", "svc-a"), ("attacker", "svc-b")):
        services.append({"kind": "Service", "metadata": {"namespace": namespace, "name": name},
                         "spec": {"ports": [{"port": 80}]}})
        slices.append({"kind": "EndpointSlice",
                       "metadata": {"namespace": namespace, "name": f"{name}-1",
                                    "labels": {"kubernetes.io/service-name": name}},
                       "ports": [{"port": ports[name]}], "endpoints": [{"addresses": ["127.0.0.1"]}]})

    def ingress(namespace: str, name: str, created: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "Ingress", "apiVersion": "networking.k8s.io/v1",
                "metadata": {"namespace": namespace, "name": name, "creationTimestamp": created},
                "spec": {"ingressClassName": "haptic", **spec}}

    app = ingress("app", "web", "2026-01-01T00:00:00Z",
                  {"rules": [{"host": "app.test", "http": {"paths": [_path("/", "Exact", "svc-a"),
                                                                     _path("/app", "Prefix", "svc-a")]}}]})
    takeover = ingress("attacker", "takeover", "2026-01-02T00:00:00Z",
                       {"rules": [{"host": "app.test", "http": {"paths": [_path("/", "Prefix", "svc-b"),
                                                                          _path("/", "Exact", "svc-b"),
                                                                          _path("/app/admin", "Prefix", "svc-b")]}}]})
    around = ingress("attacker", "around", "2026-01-02T00:00:00Z",
                     {"defaultBackend": {"service": {"name": "svc-b", "port": {"number": 80}}},
                      "rules": [{"host": "*.test", "http": {"paths": [_path("/", "Prefix", "svc-b")]}},
                                {"http": {"paths": [_path("/", "Prefix", "svc-b")]}}]})
    return {"services": services, "endpoints": slices, "ingresses": [takeover, around, app]}


def test_route_ownership_one_namespace_cannot_answer_for_another_namespaces_host(
    haproxy_bin: str, tmp_path: Path, backends: dict[str, int]
) -> None:
    http_port = _free_port()
    config = _render(tmp_path, backends, http_port, fixtures=_tenant_fixtures(backends))
    with _haproxy(haproxy_bin, config, http_port):
        cases = [
            ("app.test", "/", 200, "svc-a /"),
            ("app.test", "/app/admin", 200, "svc-a /app/admin"),  # the takeover's sub-path is not routed
            ("app.test", "/unknown", 404, "no route"),  # not the wildcard, the no-host rule or the defaultBackend
            ("other.test", "/x", 200, "svc-b /x"),  # hosts nobody owns: the wildcard still answers
            ("elsewhere.example", "/x", 200, "svc-b /x"),  # and the rule without host
        ]
        for host, path, status, body in cases:
            assert _get(http_port, host, path) == (status, body), (host, path)


def test_shared_host_namespaces_may_add_rules_to_each_others_hosts(
    haproxy_bin: str, tmp_path: Path, backends: dict[str, int]
) -> None:
    http_port = _free_port()
    config = _render(tmp_path, backends, http_port, fixtures=_tenant_fixtures(backends),
                     sharedHostNamespaces=["app", "attacker"])
    with _haproxy(haproxy_bin, config, http_port):
        assert _get(http_port, "app.test", "/") == (200, "svc-a /")  # the oldest wins the same host and path
        assert _get(http_port, "app.test", "/app/admin") == (200, "svc-b /app/admin")
        assert _get(http_port, "app.test", "/unknown") == (200, "svc-b /unknown")
