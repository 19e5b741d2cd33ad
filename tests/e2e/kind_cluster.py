"""The Kind installation the e2e tier runs against: why it cannot run here, and how it is built.

``unavailable_reason()`` names what is missing (the ``kind`` binary, a reachable Docker engine through
the ``docker`` Python SDK, ``kubectl``). ``install()`` creates the cluster from ``kind-config.yaml``
(unless it exists), builds the controller image with the Docker SDK from a minimal context (the files
``deploy/Dockerfile`` copies), loads it with ``kind load docker-image``, applies the CRDs and
``deploy/``, and waits for the certificate Job and both Deployments. ``teardown()`` deletes the cluster.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "haptic-e2e"
IMAGE = "haptic:dev"
CONTEXT = "kind-" + CLUSTER
#: what the image build needs: the Dockerfile's COPY sources (the repository's .venv stays out)
BUILD_FILES = ("pyproject.toml", "README.md", "haptic", "simulator", "deploy/Dockerfile")


def unavailable_reason() -> str | None:
    if shutil.which("kind") is None:
        return "the 'kind' binary is not installed; the e2e tier needs Kind and a Docker engine"
    if shutil.which("kubectl") is None:
        return "kubectl is not installed; the e2e tier applies deploy/ with it"
    try:
        import docker
    except ImportError:
        return "the docker Python SDK is not installed (pip install -e '.[e2e]'; make e2e does it)"
    try:
        docker.from_env().ping()
    except Exception as exc:  # no socket, permission denied, engine down: all mean "no engine"
        return f"no usable Docker engine ({type(exc).__name__}: {exc}); the e2e tier needs one for Kind"
    return None


def run(*argv: str, stdin: str | None = None, timeout: float = 600) -> str:
    done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def kubectl(*args: str, stdin: str | None = None, timeout: float = 600) -> str:
    return run("kubectl", "--context", CONTEXT, *args, stdin=stdin, timeout=timeout)


def build_context() -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in BUILD_FILES:
            tar.add(ROOT / name, arcname=name,
                    filter=lambda info: None if "__pycache__" in info.name else info)
    buffer.seek(0)
    return buffer


def build_image() -> None:
    import docker

    client = docker.from_env()
    client.images.build(fileobj=build_context(), custom_context=True, dockerfile="deploy/Dockerfile", tag=IMAGE,
                        rm=True, timeout=1800)


def install() -> None:
    if CLUSTER not in run("kind", "get", "clusters").split():
        run("kind", "create", "cluster", "--name", CLUSTER, "--config", str(ROOT / "kind-config.yaml"),
            "--wait", "120s")
    build_image()
    run("kind", "load", "docker-image", IMAGE, "--name", CLUSTER)
    kubectl("apply", "-f", "deploy/crds", "-f", "deploy/namespace.yaml")
    for crd in ("haproxytemplateconfigs", "haproxycfgs"):
        kubectl("wait", "--for=condition=Established", f"crd/{crd}.haproxy-haptic.org", "--timeout=60s")
    kubectl("apply", "-k", "deploy/")
    kubectl("-n", "haptic-system", "wait", "--for=condition=Complete", "job/haptic-webhook-certs", "--timeout=300s")
    for deployment in ("haptic-controller", "haproxy"):
        kubectl("-n", "haptic-system", "rollout", "status", f"deployment/{deployment}", "--timeout=300s")


def teardown() -> None:
    run("kind", "delete", "cluster", "--name", CLUSTER)
