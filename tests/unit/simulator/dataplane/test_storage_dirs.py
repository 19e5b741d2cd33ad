"""The fake's storage follows the pod's configured directories, like the real dataplaneapi's storage
settings: the directory is the truth, the API reports pod paths, and a config naming a file in
another directory fails on sim as it fails on a real pod."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from haptic.config.models import DataplaneSettings
from haptic.dataplane import api_errors as errors
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import STORAGE_GENERAL, STORAGE_MAPS, STORAGE_SSL
from haptic.dataplane.synchronizer import sync
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from simulator.dataplane.storage import Storage, StorageDirs
from tests.support.certs import make_pem
from tests.support.paths import REPO

pytestmark = pytest.mark.looptime


def _tls_config(cert_dir: str) -> str:
    return f"""global
    daemon

defaults
    mode http
    timeout client 5s

frontend https
    bind :8443 ssl crt {cert_dir}/example_com.pem
    default_backend web

backend web
    server s1 10.0.0.1:80
"""


async def test_a_config_naming_another_certificate_directory_is_refused_on_sim() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    aux = AuxFiles(certificates={"example.com.pem": make_pem("example.com", 7)})
    async with client_for(fake) as c:
        wrong = await sync(c, _tls_config("/etc/haproxy/certs"), aux)
        assert not wrong.ok and "cannot open certificate '/etc/haproxy/certs/example_com.pem'" in wrong.errors[0]
        right = await sync(c, _tls_config("/etc/haproxy/ssl"), aux)
        assert right.ok, right.errors
    await fake.aclose()


async def test_the_directories_are_the_configured_ones_and_reported_as_the_pod_sees_them(tmp_path: Path) -> None:
    dirs = StorageDirs(maps_dir="/srv/hp/maps", ssl_certs_dir="/srv/hp/certs", general_storage_dir="/srv/hp/files")
    storage = Storage(tmp_path / "volume", virtual_root="/srv/hp", dirs=dirs)
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), storage=storage)
    async with client_for(fake) as c:
        await c.create_storage_file(STORAGE_MAPS, "host.map", "a b\n")
        await c.create_storage_file(STORAGE_SSL, "example.com.pem", make_pem("example.com", 1))
        await c.create_storage_file(STORAGE_GENERAL, "503.http", "HTTP/1.0 503\n")
        assert [f.file for f in await c.list_storage(STORAGE_MAPS)] == ["/srv/hp/maps/host.map"]
        assert [f.file for f in await c.list_storage(STORAGE_SSL)] == ["/srv/hp/certs/example_com.pem"]
        assert [f.file for f in await c.list_storage(STORAGE_GENERAL)] == ["/srv/hp/files/503.http"]
        assert (tmp_path / "volume" / "certs" / "example_com.pem").is_file()
        assert (tmp_path / "volume" / "files" / "503.http").read_text() == "HTTP/1.0 503\n"
    await fake.aclose()
    with pytest.raises(ValueError, match="outside the pod volume"):
        Storage(tmp_path, virtual_root="/srv/hp", dirs=StorageDirs(maps_dir="/var/maps"))


async def test_files_in_the_directory_are_known_without_an_upload(tmp_path: Path) -> None:
    # A dataplaneapi restarted on a volume it keeps: what is there is listed, served and deletable.
    storage = Storage(tmp_path / "volume", virtual_root="/etc/haproxy")
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), storage=storage)
    (tmp_path / "volume" / "maps").mkdir(parents=True)
    (tmp_path / "volume" / "maps" / "left.map").write_text("a.com web\n")
    async with client_for(fake) as c:
        assert [f.storage_name for f in await c.list_storage(STORAGE_MAPS)] == ["left.map"]
        assert await c.get_storage_content(STORAGE_MAPS, "left.map") == "a.com web\n"
        await c.create_storage_file(STORAGE_MAPS, "kept.map", "k v\n")
        await fake.restart(keep_storage=True)
        assert {f.storage_name for f in await c.list_storage(STORAGE_MAPS)} == {"left.map", "kept.map"}
        assert (await c.delete_storage_file(STORAGE_MAPS, "left.map")).status == 204
        assert not (tmp_path / "volume" / "maps" / "left.map").exists()
        with pytest.raises(errors.NotFoundError):
            await c.delete_storage_file(STORAGE_MAPS, "left.map")
    await fake.aclose()


def _effective_dirs(path: Path) -> list[tuple[str, str, str]]:
    out = []
    for doc in yaml.safe_load_all(path.read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "HAProxyTemplateConfig":
            # Only the dataplane settings: library-based configs are expanded later.
            dp = DataplaneSettings.model_validate((doc.get("spec") or {}).get("dataplane") or {})
            out.append((dp.maps_dir, dp.ssl_certs_dir, dp.general_storage_dir))
    return out


def test_controller_fake_and_deployed_dataplaneapi_agree_on_the_storage_directories() -> None:
    dpapi = yaml.safe_load((REPO / "deploy" / "haproxy" / "dataplaneapi.yaml").read_text())["dataplaneapi"]["resources"]
    deployed = (dpapi["maps_dir"], dpapi["ssl_certs_dir"], dpapi["general_storage_dir"])
    fake = StorageDirs()
    assert (fake.maps_dir, fake.ssl_certs_dir, fake.general_storage_dir) == deployed
    configs = [p for d in ("deploy", "examples", "scenarios/configs") for p in sorted((REPO / d).rglob("*.yaml"))]
    found = {str(p.relative_to(REPO)): dirs for p in configs for dirs in _effective_dirs(p)}
    assert "scenarios/configs/ingress-library.yaml" in found  # relies on the defaults
    assert {name: dirs for name, dirs in found.items() if dirs != deployed} == {}
