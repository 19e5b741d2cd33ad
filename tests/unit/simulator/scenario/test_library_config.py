"""The scenarios' expanded Ingress library config is the generator's output: a library change that is
not regenerated into it (``python -m simulator.scenario.library_config``) fails here."""

from __future__ import annotations

import yaml

from simulator.scenario.library_config import SCENARIO_MAXCONN, render
from tests.support.paths import REPO

COMMITTED = REPO / "scenarios" / "configs" / "ingress-library.yaml"


def test_the_committed_config_is_the_generated_one() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(), \
        "regenerate: python -m simulator.scenario.library_config > scenarios/configs/ingress-library.yaml"


def test_it_renders_the_library_with_a_connection_limit_a_shell_allows() -> None:
    spec = yaml.safe_load(COMMITTED.read_text(encoding="utf-8"))["spec"]
    assert spec["templatingSettings"]["extraContext"]["maxconn"] == SCENARIO_MAXCONN
    assert "maxconn {{ extraContext.maxconn" in spec["haproxyConfig"]["template"]
    assert "{{ extraContext.bindAddress" in spec["haproxyConfig"]["template"]
    assert spec["dataplane"]["sslCertsDir"] == "/etc/haproxy/ssl"


def test_the_committed_gateway_config_is_the_generated_one() -> None:
    committed = REPO / "scenarios" / "configs" / "gateway-library.yaml"
    assert committed.read_text(encoding="utf-8") == render("gateway"), \
        "regenerate: python -m simulator.scenario.library_config gateway > scenarios/configs/gateway-library.yaml"


def test_the_committed_combined_config_is_the_generated_one() -> None:
    committed = REPO / "scenarios" / "configs" / "ingress-gateway-library.yaml"
    assert committed.read_text(encoding="utf-8") == render("ingress,gateway"), \
        "regenerate: python -m simulator.scenario.library_config ingress,gateway > " \
        "scenarios/configs/ingress-gateway-library.yaml"
