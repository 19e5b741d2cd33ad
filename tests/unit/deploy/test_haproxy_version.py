"""One HAProxy version in deploy/: the controller image validates (`haproxy -c`) with the major.minor the
HAProxy pods run, since discovery admits only pods whose Dataplane API reports the controller's own
haproxy major.minor. A mismatch deploys nothing on a real cluster, and no fake would notice (the fakes
report the local haproxy's version)."""

from __future__ import annotations

import re

import pytest

from tests.unit.deploy.test_manifests import DEPLOY, containers, find

#: Debian's haproxy package by release, for images that `apt-get install haproxy`.
DEBIAN_HAPROXY = {"bullseye": "2.2", "bookworm": "2.6", "trixie": "3.0"}
_HAPROXY_IMAGE = re.compile(r"^(?:docker\.io/)?(?:haproxytech/haproxy-[a-z]+|(?:library/)?haproxy):(\d+\.\d+)")


def image_haproxy_version(image: str) -> str | None:
    """The major.minor of an official or haproxytech HAProxy image reference, None for other images."""
    match = _HAPROXY_IMAGE.match(image)
    return match[1] if match else None


def dockerfile_haproxy_version(text: str) -> str:
    """The haproxy major.minor the final stage of a Dockerfile carries."""
    args: dict[str, str] = {}
    stages: list[tuple[str, list[str]]] = []
    for raw in re.sub(r"\\\n", " ", text).splitlines():
        line = raw.strip()
        if line.startswith("ARG ") and not stages and "=" in line:
            name, _, value = line[4:].partition("=")
            args[name.strip()] = value.strip()
        elif line.startswith("FROM "):
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], ""), line.split()[1])
            stages.append((image, []))
        elif stages:
            stages[-1][1].append(line)
    assert stages, "no FROM in the Dockerfile"
    base, body = stages[-1]
    version = image_haproxy_version(base)
    if version is not None:
        return version
    installs = any(re.search(r"apt-get install\b.*\bhaproxy\b", line) for line in body)
    release = next((r for r in DEBIAN_HAPROXY if r in base), None)
    if installs and release is not None:
        return DEBIAN_HAPROXY[release]
    pytest.fail(f"cannot tell which haproxy the controller image {base!r} carries")


def pod_haproxy_versions() -> dict[str, str | None]:
    spec = find("Deployment", "haproxy")["spec"]["template"]["spec"]
    every = [*spec.get("initContainers", []), *containers(find("Deployment", "haproxy")).values()]
    return {c["name"]: image_haproxy_version(c["image"]) for c in every}


def test_the_controller_validates_with_the_haproxy_the_pods_run() -> None:
    controller = dockerfile_haproxy_version((DEPLOY / "Dockerfile").read_text())
    pods = pod_haproxy_versions()
    assert set(pods.values()) == {controller}, (
        f"deploy/Dockerfile carries haproxy {controller}, the HAProxy pods run {pods}: discovery would reject "
        "every pod (major.minor must match)")


@pytest.mark.parametrize(("dockerfile", "version"), [
    ("FROM python:3.11-slim-bookworm\nRUN apt-get update && apt-get install -y --no-install-recommends haproxy\n",
     "2.6"),
    ("ARG HAPROXY_IMAGE=haproxytech/haproxy-debian:3.2\nFROM ${HAPROXY_IMAGE}\nRUN true\n", "3.2"),
    ("FROM python:3.12 AS build\nFROM haproxy:2.8.5\n", "2.8"),
])
def test_the_version_reading_tells_images_apart(dockerfile: str, version: str) -> None:
    assert dockerfile_haproxy_version(dockerfile) == version


def test_the_image_build_names_its_haproxy_image_once() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^ARG HAPROXY_IMAGE=\S+$", text, re.MULTILINE)
    assert re.search(r"^FROM \$\{HAPROXY_IMAGE\}$", text, re.MULTILINE)
    assert 'ENTRYPOINT ["haptic"]' in text
