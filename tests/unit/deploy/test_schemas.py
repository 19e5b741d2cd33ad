"""Every built-in object under deploy/ (and the cert-manager example's) passes the Kubernetes JSON
schemas of the API versions we support, offline: the strict schemas from the ``kubernetes-validate``
package (unknown fields are errors, as `kubectl apply --validate=strict` would say)."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.unit.deploy.test_manifests import DEPLOY, all_objects, documents

#: The oldest and newest Kubernetes minor versions the manifests are checked against.
VERSIONS = ("1.29.0", "1.33.0")
BUILT_IN = [o for o in all_objects() if "." not in o["apiVersion"].split("/")[0] or
            o["apiVersion"].split("/")[0].endswith(".k8s.io")]


def test_only_custom_kinds_are_left_out() -> None:
    left_out = {o["kind"] for o in all_objects()} - {o["kind"] for o in BUILT_IN}
    assert left_out == {"HAProxyTemplateConfig"}  # checked against its CRD in test_manifests


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("obj", BUILT_IN, ids=[f"{o['kind']}/{o['metadata']['name']}" for o in BUILT_IN])
def test_manifests_pass_the_kubernetes_schemas(obj: dict[str, Any], version: str) -> None:
    kubernetes_validate.validate(obj, version, strict=True)


def test_the_schemas_catch_a_misspelt_field() -> None:
    deployment = next(o for o in BUILT_IN if o["kind"] == "Deployment")
    broken = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError, match="replica"):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def test_the_generated_config_map_inputs_exist() -> None:
    for name in ("dataplaneapi.yaml", "haproxy.cfg"):
        assert (DEPLOY / "haproxy" / name).read_text().strip()
    assert documents(DEPLOY / "haproxy" / "dataplaneapi.yaml")[0]["config_version"] == 2
