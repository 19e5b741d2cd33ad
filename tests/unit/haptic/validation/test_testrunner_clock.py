"""``now()`` in validationTests and in the webhook's dry run comes from the caller's clock, fixed per run."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from haptic.config.models import load_config
from haptic.templating.engine import compile_templates
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import ProcessResult
from haptic.validation.testrunner import ValidationTestRunner, report_summary
from haptic.webhook.proposal_check import DryRunCheck

WALL = datetime(2024, 2, 29, 13, 5, 9, tzinfo=UTC).timestamp()
TEMPLATE = "global\n    # rendered {{ now() | format_time('2006-01-02') }}\n"


class OkRunner:
    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        return ProcessResult(0, "", "")


class AsyncOkRunner:
    async def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        return ProcessResult(0, "", "")


def spec(tests: dict[str, Any] | None = None) -> Any:
    return load_config(
        {
            "credentialsSecretRef": {"name": "creds"},
            "podSelector": {"matchLabels": {"app": "haproxy"}},
            "watchedResources": {
                "things": {"apiVersion": "v1", "resources": "things", "indexBy": ["metadata.name"]}
            },
            "haproxyConfig": {"template": TEMPLATE},
            "validationTests": tests or {},
        }
    ).spec


STAMP_TEST = {
    "stamp": {
        "fixtures": {},
        "assertions": [{"type": "contains", "pattern": "# rendered 2024-02-29$"}, {"type": "deterministic"}],
    }
}


def test_validation_tests_see_the_run_wall_time_and_stay_deterministic() -> None:
    config_spec = spec(STAMP_TEST)
    runner = ValidationTestRunner(config_spec, compile_templates(config_spec),
                                  HAProxyValidator("haproxy", runner=OkRunner()), wall_time=WALL)
    report = runner.run()
    assert report.passed, report_summary(report)


def test_without_a_wall_time_now_fails_the_test_clearly() -> None:
    config_spec = spec(STAMP_TEST)
    runner = ValidationTestRunner(config_spec, compile_templates(config_spec),
                                  HAProxyValidator("haproxy", runner=OkRunner()))
    report = runner.run()
    assert not report.passed
    assert "no clock" in report_summary(report)


async def test_the_webhook_dry_run_renders_with_the_controller_clock() -> None:
    config_spec = spec()
    engine = compile_templates(config_spec)
    check = DryRunCheck(config_spec, engine, HAProxyValidator("haproxy"), runner=AsyncOkRunner(),
                        wall_clock=lambda: WALL)
    outcome = await check({"things": config_spec.make_store("things")})
    # The same check without a clock fails on now() (next test): passing here means the clock was used.
    assert outcome.problems == ()


async def test_the_webhook_dry_run_without_a_clock_reports_now_as_the_problem() -> None:
    config_spec = spec()
    check = DryRunCheck(config_spec, compile_templates(config_spec), HAProxyValidator("haproxy"),
                        runner=AsyncOkRunner())
    outcome = await check({"things": config_spec.make_store("things")})
    assert any("no clock" in problem for problem in outcome.problems), outcome.problems
