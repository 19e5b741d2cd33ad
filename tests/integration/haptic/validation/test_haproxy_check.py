"""``haproxy -c`` through the runner port, with the real binary."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.templating.context import StorageDirs
from haptic.validation.capabilities import detect_capabilities
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import AsyncSubprocessRunner, BlockingAsyncRunner
from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy

EXAMPLE = REPO / "examples" / "ingress" / "haproxytemplateconfig.yaml"

CONFIG = """global
    default-path origin /etc/haproxy
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend f
    bind 127.0.0.1:8080
    http-request set-var(txn.b) req.hdr(host),map(maps/host.map)
    http-request set-var(txn.c) req.hdr(host),map(/etc/haproxy/maps/host.map)
    errorfile 503 /etc/haproxy/general/503.http
    use_backend %[var(txn.b)] if { var(txn.b) -m found }
    default_backend b
backend b
    server SRV_1 127.0.0.1:1 disabled
"""
AUX = AuxFiles(maps={"host.map": "a.test b\n"}, files={"503.http": "HTTP/1.0 503 Service Unavailable\r\n\r\n"})


def test_valid_config_with_aux_files_relocated(haproxy_bin: str, tmp_path: Path) -> None:
    validator = HAProxyValidator(haproxy_bin, tmp_root=str(tmp_path))
    result = validator.validate(CONFIG, AUX)
    assert result.valid, result.output
    assert not result.cached and result.errors == ()
    assert list(tmp_path.iterdir()) == [], "the private temp dir is removed"
    again = validator.validate(CONFIG, AUX)
    assert again.valid and again.cached and again.checksum == result.checksum


def test_missing_aux_file_fails(haproxy_bin: str) -> None:
    result = HAProxyValidator(haproxy_bin).validate(CONFIG, AuxFiles(maps=AUX.maps))
    assert not result.valid
    located = [e for e in result.errors if e.file == "haproxy.cfg" and e.line == 12]
    assert located and "503.http" in located[0].message, result.errors


def test_errors_are_mapped_to_rendered_lines(haproxy_bin: str) -> None:
    broken = CONFIG.replace("    timeout client 5s\n", "    timeout client 5s\n    frobnicate on\n")
    result = HAProxyValidator(haproxy_bin).validate(broken, AUX)
    assert not result.valid
    first = result.errors[0]
    assert (first.file, first.line, first.source) == ("haproxy.cfg", 6, "frobnicate on")
    assert "unknown keyword 'frobnicate'" in first.message
    assert "haptic-validate-" not in result.summary(), "temporary paths are not leaked into messages"


def test_strict_dns_versus_dr(haproxy_bin: str) -> None:
    with_name = CONFIG.replace("server SRV_1 127.0.0.1:1 disabled", "server SRV_1 no-such-host.invalid:80")
    assert not HAProxyValidator(haproxy_bin, strict=True).validate(with_name, AUX).valid
    assert HAProxyValidator(haproxy_bin, strict=False).validate(with_name, AUX).valid


def test_certificates_and_crt_lists_are_laid_out_like_the_pod(haproxy_bin: str) -> None:
    import yaml

    doc = yaml.safe_load(EXAMPLE.read_text())
    data = doc["spec"]["validationTests"]["tls-termination"]["fixtures"]["secrets"][0]["data"]
    pem = base64.b64decode(data["tls.crt"]).decode() + base64.b64decode(data["tls.key"]).decode()
    config = CONFIG.replace(
        "bind 127.0.0.1:8080", "bind 127.0.0.1:8443 ssl crt-list /etc/haproxy/general/list.txt"
    )
    dirs = StorageDirs(ssl_certs_dir="/etc/haproxy/ssl")
    crt_lists = {"list.txt": "ssl/a.pem a.test\n"}
    aux = AuxFiles(maps=AUX.maps, files=AUX.files, certificates={"a.pem": pem}, crt_lists=crt_lists)
    assert HAProxyValidator(haproxy_bin, dirs).validate(config, aux).valid
    bad = AuxFiles(maps=AUX.maps, files=AUX.files, certificates={"a.pem": "garbage"}, crt_lists=aux.crt_lists)
    result = HAProxyValidator(haproxy_bin, dirs).validate(config, bad)
    assert not result.valid


async def test_async_runners_give_the_same_result(haproxy_bin: str) -> None:
    validator = HAProxyValidator(haproxy_bin, cache_size=0)
    live = await validator.avalidate(CONFIG, AUX, runner=AsyncSubprocessRunner())
    blocking = await validator.avalidate(CONFIG, AUX, runner=BlockingAsyncRunner())
    broken = await validator.avalidate(CONFIG + "    nonsense\n", AUX, runner=AsyncSubprocessRunner())
    assert live.valid and blocking.valid and not broken.valid
    assert broken.errors[0].line == 17


def test_detect_capabilities(haproxy_bin: str) -> None:
    caps = detect_capabilities(haproxy_bin)
    assert caps["version_major"] >= 2 and caps["haproxy_version"].count(".") == 2
    with pytest.raises(RuntimeError, match="cannot run"):
        detect_capabilities("/nonexistent/haproxy")
