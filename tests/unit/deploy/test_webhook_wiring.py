"""The validating webhook works as deployed: every variable the controller Deployment sets is one the
code reads, the certificate Secret is mounted where WEBHOOK_CERT_DIR points, the Secret is the one the
certificate Job (or the cert-manager example) writes, for the Service the webhook is registered with."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from haptic.live.certs import service_dns_names
from haptic.live.webhook_options import CA_FILE, CERT_FILE, KEY_FILE
from tests.unit.deploy.test_manifests import DEPLOY, containers, documents, env, find

ROOT = DEPLOY.parent


def variables_read_by_the_code() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "haptic").rglob("*.py"):
        for line in path.read_text().splitlines():
            if "environ" in line or "_env" in line:
                names.update(re.findall(r"""["']([A-Z][A-Z0-9_]+)["']""", line))
    return names


def controller() -> dict[str, Any]:
    return containers(find("Deployment", "haptic-controller"))["controller"]


def test_every_variable_the_deployment_sets_is_read() -> None:
    assert set(env(controller())) - variables_read_by_the_code() == set()


def cert_secret_name() -> str:
    directory = env(controller())["WEBHOOK_CERT_DIR"]
    mount = next(m for m in controller()["volumeMounts"] if m["mountPath"] == directory)
    volume = next(v for v in find("Deployment", "haptic-controller")["spec"]["template"]["spec"]["volumes"]
                  if v["name"] == mount["name"])
    assert mount.get("readOnly") is True
    assert "items" not in volume["secret"], "the code reads tls.crt, tls.key and ca.crt under their own names"
    return str(volume["secret"]["secretName"])


def test_the_certificate_secret_is_mounted_where_the_code_reads_it() -> None:
    assert (CERT_FILE, KEY_FILE, CA_FILE) == ("tls.crt", "tls.key", "ca.crt")  # the Secret's keys
    assert cert_secret_name() == "haproxy-webhook-certs"


def webhook_service() -> tuple[str, str]:
    namespace, _, name = env(controller())["WEBHOOK_SERVICE"].partition("/")
    service = find("Service", name)
    assert service["metadata"]["namespace"] == namespace
    assert [p["port"] for p in service["spec"]["ports"]] == [443]
    assert {p["targetPort"] for p in service["spec"]["ports"]} == {"webhook"}
    return namespace, name


def test_the_certificate_job_writes_that_secret_for_the_registered_service() -> None:
    job = find("Job", "haptic-webhook-certs")
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:2] == ["webhook", "certs"]
    option = dict(zip(args[2::2], args[3::2], strict=True))
    namespace, service = webhook_service()
    assert option["--secret"] == f"{namespace}/{cert_secret_name()}"
    assert (option["--service"], option["--namespace"]) == (service, namespace)


def test_the_cert_manager_example_issues_the_same_secret() -> None:
    example = ROOT / "examples" / "cert-manager"
    kustomization = documents(example / "kustomization.yaml")[0]
    assert kustomization["resources"][0] == "../../deploy"
    deleted = [yaml.safe_load(p["patch"]) for p in kustomization["patches"]]
    assert {(d["kind"], d["metadata"]["name"]) for d in deleted} == {
        (kind, "haptic-webhook-certs") for kind in ("Job", "ServiceAccount", "Role", "RoleBinding")}
    certificate = next(d for d in documents(example / "certificates.yaml")
                       if d["kind"] == "Certificate" and not d["spec"].get("isCA"))
    namespace, service = webhook_service()
    assert certificate["spec"]["secretName"] == cert_secret_name()
    assert certificate["metadata"]["namespace"] == namespace
    assert certificate["spec"]["dnsNames"] == service_dns_names(service, namespace)


def test_the_rbac_names_the_configuration_the_controller_applies() -> None:
    from haptic.webhook.configuration import DEFAULT_NAME
    from haptic.preflight.permissions import WEBHOOK_CONFIGURATION_NAME

    assert WEBHOOK_CONFIGURATION_NAME == DEFAULT_NAME


def test_the_probe_comments_say_what_the_code_does() -> None:
    """Controller.health() is healthy while waiting for the config (tests/integration/controller/
    test_run_command.py checks it over HTTP); the manifest must not tell operators otherwise."""
    text = (DEPLOY / "controller.yaml").read_text()
    comment = " ".join(line.strip().lstrip("# ") for line in
                       text.split("livenessProbe:")[0].splitlines()[-6:] if line.strip().startswith("#"))
    assert "stays healthy while the controller waits" in comment
    assert not re.search(r"/healthz is unhealthy while", comment)


def test_docs_name_no_variable_the_code_ignores() -> None:
    readme = Path(ROOT / "README.md").read_text()
    assert "WEBHOOK_CERT_SECRET_NAME" not in readme
