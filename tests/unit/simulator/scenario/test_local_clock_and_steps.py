"""The local backend's pure parts: its scaled clock, the controller intervals scaled with it, patches
of objects as the scenario wrote them, and when the webhook runs."""

from __future__ import annotations

import pytest

from simulator.scenario.backend import NotApplicable
from simulator.scenario.failover import lease_duration_of
from simulator.scenario.local_backend import choose_scale, enables_webhook, patched_object, scale_config

CONFIG = {"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
          "metadata": {"name": "c", "namespace": "haptic"},
          "spec": {"dataplane": {"port": 5555, "driftPreventionInterval": "60s"},
                   "watchedResources": {"ingresses": {"apiVersion": "networking.k8s.io/v1", "resources": "ingresses"}}}}


def test_short_scenarios_run_on_the_wall_clock_long_ones_just_fast_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HAPTIC_LOCAL_TIME_SCALE", raising=False)
    monkeypatch.setenv("HAPTIC_LOCAL_MAX_ADVANCE", "120")
    assert choose_scale(0.0) == 1.0 and choose_scale(120.0) == 1.0
    assert choose_scale(600.0) == pytest.approx(0.2)
    assert choose_scale(167.0) == pytest.approx(120 / 167), "the 167 s scenario the old 120 s rule missed"
    with pytest.raises(NotApplicable, match="advances 7200s"):
        choose_scale(7200.0)
    monkeypatch.setenv("HAPTIC_LOCAL_TIME_SCALE", "0.5")
    assert choose_scale(0.0) == 0.5


def test_the_controllers_own_intervals_are_scaled_with_the_clock() -> None:
    scaled = scale_config(CONFIG, 0.2)
    assert scaled["spec"]["dataplane"]["driftPreventionInterval"] == "12.000s"
    assert scaled["spec"]["dataplane"]["minDeploymentInterval"] == "0.400s"  # the default, scaled
    assert scaled["spec"]["dataplane"]["port"] == 5555
    assert lease_duration_of(scaled) == pytest.approx(3.0)
    assert "controller" not in CONFIG["spec"], "the input is not modified"
    assert scale_config(CONFIG, 1.0) == CONFIG


def test_patches_apply_to_the_object_as_the_scenario_wrote_it() -> None:
    slice_ = {"kind": "EndpointSlice", "metadata": {"name": "s"}, "endpoints": [{"addresses": ["10.2.0.1"]}]}
    merged = patched_object(slice_, "merge", {"endpoints": [{"addresses": ["10.2.0.9"]}]})
    assert merged["endpoints"] == [{"addresses": ["10.2.0.9"]}]
    replaced = patched_object(slice_, "json", [{"op": "add", "path": "/endpoints/-", "value": {"addresses": ["x"]}}])
    assert [e["addresses"] for e in replaced["endpoints"]] == [["10.2.0.1"], ["x"]]
    assert slice_["endpoints"] == [{"addresses": ["10.2.0.1"]}]
    with pytest.raises(ValueError, match="unsupported patch type"):
        patched_object(slice_, "apply", {})


def test_the_webhook_runs_where_the_config_enables_it() -> None:
    assert not enables_webhook(CONFIG)
    enabled = {"spec": {"watchedResources": {"ingresses": {"enableValidationWebhook": True}}}}
    assert enables_webhook(enabled)
