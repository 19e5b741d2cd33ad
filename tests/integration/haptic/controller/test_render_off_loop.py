"""``haptic run`` keeps answering while a long render runs: probes, debug vars and Lease renewals go on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from simulator.cluster_objects import SLOT_TEMPLATE, credentials_secret, template_config
from simulator.kube import BackgroundServer
from tests.integration.haptic.controller.test_run_command import _create, _free_address, _get, _seed, _until

# About 60 million loop iterations: about 3 s of CPU on this machine, well within the 30 s render timeout,
# rendering nothing.
SLOW = "{% for i in range(60000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}"
# Renewals every 200 ms, so a render of a second or more on any machine spans several of them (with the
# 2 s default a fast machine's render fitted between two renewals and the test proved nothing).
FAST_RENEWALS = {"controller": {"leaderElection": {"enabled": True, "leaseDuration": "3s", "renewDeadline": "2s",
                                                   "retryPeriod": "200ms"}}}


def test_health_and_lease_renewals_continue_during_a_long_render(tmp_path: Path, haproxy_bin: str) -> None:
    with BackgroundServer() as server:
        server.call(_seed)
        host, (port,) = _free_address()
        haptic = Path(sys.executable).parent / "haptic"
        env = dict(os.environ, POD_NAMESPACE="haptic", POD_NAME="controller-a", LOG_LEVEL="INFO")
        proc = subprocess.Popen(
            [str(haptic), "run", "--server", server.url, "--debug-port", str(port), "--metrics-port", "0",
             "--bind-address", host, "--haproxy-binary", haproxy_bin, "--shutdown-timeout", "10"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        )
        try:
            base = f"http://{host}:{port}"
            _until(lambda: _get(f"{base}/debug/vars/iterations")[1], "the debug server", proc=proc)

            def create(obj: dict[str, Any]) -> None:
                _create(server, obj)

            create(template_config(template=SLOW + SLOT_TEMPLATE, extra_spec=FAST_RENEWALS))
            create(credentials_secret("admin", "s3cret-value"))
            _until(lambda: _get(f"{base}/debug/vars/leader")[1].get("is_leader"), "leadership", timeout=60)

            def renew_time() -> str:
                lease = server.call(lambda api: api.get(api.resolve("coordination.k8s.io/v1", "leases"), "haptic",
                                                        "haptic-leader"))
                return str(lease["spec"].get("renewTime"))

            # Polled until the first render is published: what answered before that answered during the render
            # (the coordinator renders once leadership is won and the stores are synced).
            during: list[tuple[int, str]] = []
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                health = _get(f"{base}/healthz")[0]
                if _get(f"{base}/debug/vars/rendered")[1] is not None:
                    break
                during.append((health, renew_time()))
                time.sleep(0.2)
            else:
                raise AssertionError("the render never finished")
            assert len(during) >= 5, f"the loop answered only {len(during)} times during the render"
            assert {status for status, _ in during} == {200}
            renewals = {renewed for _, renewed in during}
            assert len(renewals) >= 2, f"the Lease was not renewed during the render: {sorted(renewals)}"
            assert proc.poll() is None
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
