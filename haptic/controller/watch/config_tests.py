"""A config's own ``validationTests`` gate its adoption: a generation whose tests fail is not adopted.

Run for every config before an iteration is built from it (the first one included) and for every new
generation while one runs; the failures, one line per failed test, become the config's ``Invalid``
status and the previous generation keeps running. Tests run with ``haproxy -c`` strict (DNS too),
through ``ControllerPorts.run_blocking`` (a worker thread live; inline in the simulator, where no
virtual time may pass during ``haproxy -c``).

Results are remembered per (spec, haproxy binary, capabilities), process-wide: a reinitialization
for the same config (a CRD installed, say) and every replica of a simulated cluster reuse them.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.controller.ports import ControllerPorts
from haptic.templating.context import StorageDirs
from haptic.templating.engine import compile_templates
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.testrunner import TestReport, ValidationTestRunner

#: longest part of an assertion's message a status shows (what it saw is left out: it may be a certificate)
_MAX_DETAIL = 200
_PATTERN_TYPES = frozenset({"contains", "not_contains", "match_count", "match_order", "haproxy_valid"})


_CACHE_SIZE = 32
_results: OrderedDict[str, list[str]] = OrderedDict()


def _key(spec: HAProxyTemplateConfigSpec, binary: str, capabilities: dict[str, Any] | None) -> str:
    body = json.dumps([spec.model_dump(mode="json"), binary, capabilities or {}], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


async def validation_test_failures(spec: HAProxyTemplateConfigSpec, ports: ControllerPorts,
                                   capabilities: dict[str, Any] | None) -> list[str]:
    """One line per failing embedded test of ``spec`` (``validationTest <name>: <first failure>``)."""
    if not spec.validation_tests:
        return []
    key = _key(spec, ports.haproxy_binary, capabilities)
    if key in _results:
        _results.move_to_end(key)
        return list(_results[key])
    failures = await _run(spec, ports, capabilities)
    _results[key] = failures
    while len(_results) > _CACHE_SIZE:
        _results.popitem(last=False)
    return list(failures)


async def _run(spec: HAProxyTemplateConfigSpec, ports: ControllerPorts,
               capabilities: dict[str, Any] | None) -> list[str]:
    dirs = StorageDirs.from_spec(spec.dataplane)
    runner = ValidationTestRunner(spec, compile_templates(spec), HAProxyValidator(ports.haproxy_binary, dirs,
                                                                                  strict=True),
                                  capabilities=capabilities, wall_time=ports.clock.wall())
    report = await ports.run_blocking(runner.run)
    return failure_lines(report)


def failure_lines(report: TestReport) -> list[str]:
    """``validationTest <name>: <assertion>: <why>`` per failed test, without the rendered content."""
    lines = []
    for result in report.results:
        if result.passed:
            continue
        failed = [a for a in result.assertions if not a.passed]
        if not failed:
            lines.append(f"validationTest {result.name}: rendering failed: {result.rendering_error}")
            continue
        first = failed[0]
        what = first.description or f"{first.type} on {first.target}"
        # Some messages show what the assertion looked at ("... not found in haproxy.cfg: <content>", the value
        # an equals or jsonpath saw, a diff): rendered content may hold keys, so only the pattern part is kept.
        why = ""
        if first.message and first.type in _PATTERN_TYPES:
            why = first.message.split(" in " + first.target + ":", 1)[0].splitlines()[0]
        why = why if len(why) <= _MAX_DETAIL else why[:_MAX_DETAIL] + "…"
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        lines.append(f"validationTest {result.name}: {what}{': ' + why if why else ''}{more}")
    return lines
