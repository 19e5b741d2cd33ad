"""A config's validationTests gate its adoption, from the first generation on (simulator, real haproxy -c)."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.cluster_objects import template_config

pytestmark = pytest.mark.looptime

FAILING = {"needs-a-marker": {"fixtures": {}, "description": "the marker test",
                              "assertions": [{"type": "contains", "pattern": "no-such-marker",
                                              "description": "the marker is rendered"}]}}


async def test_a_first_config_whose_tests_fail_is_not_run_until_they_pass(make_harness: Any) -> None:
    h = await make_harness(ingress_library=False, config=template_config(extra_spec={"validationTests": FAILING}))
    await h.settle(limit=30)
    controller = h.replicas[0].controller
    assert controller.iteration is None
    assert "validationTest needs-a-marker: the marker is rendered" in controller.waiting_for
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Invalid"
    assert status["validationErrors"] == [
        "validationTest needs-a-marker: the marker is rendered: pattern 'no-such-marker' not found"]
    assert h.events("deployment.started") == []

    passing = {"needs-a-marker": {**FAILING["needs-a-marker"],
                                  "assertions": [{"type": "contains", "pattern": "frontend"}]}}
    h.patch("haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig", "haproxy-config",
            {"spec": {"validationTests": passing}}, namespace="haptic")
    await h.settle()
    assert controller.iteration is not None
    assert h.events("deployment.completed")
    assert h.template_config()["status"]["validationStatus"] == "Valid"

