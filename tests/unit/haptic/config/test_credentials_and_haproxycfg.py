from __future__ import annotations

import base64
from typing import Any

import pytest

from haptic.config.errors import ConfigError
from haptic.config.haproxycfg import HAProxyCfg, runtime_config_name
from haptic.config.models import Credentials, load_credentials

PASSWORD = "s3cr3t-Pa55"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(**data: str) -> dict[str, Any]:
    return {"metadata": {"name": "haproxy-credentials", "namespace": "haptic"}, "data": data}


def test_credentials_from_secret_data() -> None:
    creds = load_credentials(secret(dataplane_username=b64("admin"), dataplane_password=b64(PASSWORD)))
    assert creds.username == "admin"
    assert creds.password.get_secret_value() == PASSWORD
    assert Credentials.from_secret(secret(dataplane_username=b64("admin"), dataplane_password=b64(PASSWORD))) == creds


def test_credentials_never_show_the_password() -> None:
    creds = load_credentials(secret(dataplane_username=b64("admin"), dataplane_password=b64(PASSWORD)))
    for text in (repr(creds), str(creds), f"{creds}", str(creds.model_dump()), creds.model_dump_json()):
        assert PASSWORD not in text


def test_string_data_is_accepted() -> None:
    creds = load_credentials({"stringData": {"dataplane_username": "u", "dataplane_password": PASSWORD}})
    assert creds.password.get_secret_value() == PASSWORD


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"dataplane_username": b64("admin")}, "data.dataplane_password"),
        ({"dataplane_password": b64(PASSWORD)}, "data.dataplane_username"),
        ({"dataplane_username": b64("admin"), "dataplane_password": b64("")}, "data.dataplane_password"),
        ({"dataplane_username": "%%%not-base64", "dataplane_password": b64(PASSWORD)}, "data.dataplane_username"),
    ],
)
def test_bad_secrets_name_the_secret_and_key(data: dict[str, str], path: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_credentials(secret(**data))
    assert info.value.object_name == "Secret haptic/haproxy-credentials"
    assert info.value.path == path
    assert PASSWORD not in str(info.value)


def test_haproxycfg_round_trip() -> None:
    wire = {
        "apiVersion": "haproxy-haptic.org/v1alpha1",
        "kind": "HAProxyCfg",
        "metadata": {"name": runtime_config_name("haproxy-config"), "namespace": "haptic"},
        "spec": {"content": "global\n", "checksum": "0123456789abcdef"},
        "status": {
            "deployedToPods": [
                {
                    "podName": "haproxy-0",
                    "deployedAt": "2026-01-01T00:00:00Z",
                    "lastReloadID": "r1",
                    "syncDuration": "1.5s",
                    "lastOperationSummary": {"totalAPIOperations": 3, "serversAdded": 2},
                }
            ],
            "metadata": {"totalSize": 10, "contentSize": 7},
            "auxiliaryFiles": {"mapFiles": [{"kind": "HAProxyMapFile", "name": "haproxy-map-hosts"}]},
        },
    }
    cfg = HAProxyCfg.model_validate(wire)
    assert cfg.metadata.name == "haproxy-config-haproxycfg"
    assert cfg.spec.path == "/etc/haproxy/haproxy.cfg" and cfg.spec.compressed is False
    assert cfg.status is not None
    pod = cfg.status.deployed_to_pods[0]
    assert pod.last_reload_id == "r1" and pod.last_operation_summary is not None
    assert pod.last_operation_summary.total_api_operations == 3
    out = cfg.to_json()
    assert out["status"]["deployedToPods"][0]["lastReloadID"] == "r1"
    assert out["status"]["deployedToPods"][0]["syncDuration"] == "1.5s"
    assert out["status"]["deployedToPods"][0]["lastOperationSummary"]["totalAPIOperations"] == 3
    assert HAProxyCfg.model_validate(out) == cfg
