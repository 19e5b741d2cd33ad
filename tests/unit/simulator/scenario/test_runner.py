"""The runner on the scripted backend: steps, every expectation kind, failure reports, invariants."""

from __future__ import annotations

from tests.unit.simulator.scenario.conftest import Runner, service

HEAD = f"""\
name: t
description: runner test
setup:
  pods: 2
  config: {{file: cfg.yaml}}
  objects:
    - {service("web")}
steps:
"""


def test_passing_scenario_with_every_expectation_kind(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + f"""\
  - expect:
      config: {{contains: backend default_web, not_contains: default_api, regex: '^global$'}}
      map: {{name: hosts.map, contains: web.example web}}
      reloads: {{total: 2}}
      events: {{present: [], since: start, in_order: [template.rendered, validation.completed, deployment.completed]}}
      metric: {{name: haptic_reloads_total, eq: 2}}
      haproxycfg: {{fields: {{status.deployedToPods: 2}}, contains: {{spec.content: default_web}}}}
      config_status: {{fields: {{status.validation: Valid}}}}
      traffic: {{host: web.example, status: 200}}
  - apply: {service("api")}
  - expect:
      within: 10s
      config: {{pod: 1, contains: backend default_api}}
      reloads: {{pod: '*', delta: 2}}
      runtime_updates: {{delta: 0}}
      events:
        present: [{{type: config.applied.to.pod, fields: {{pod_name: haproxy-1}}}}]
        absent: [validation.failed]
  - patch: {{kind: Service, name: api, patch: {{metadata: {{annotations: {{weight: '5'}}}}}}}}
  - settle:
  - expect: {{reloads: {{delta: 0}}, runtime_updates: {{delta: 2}}, converged: {{within: 5s}}}}
  - delete: {{kind: Service, name: api}}
  - advance: 1m
  - expect:
      config: {{not_contains: default_api}}
      map: {{name: other.map, absent: true}}
""")
    assert result.status == "passed", result.report()
    assert result.steps_run == 9
    assert result.not_applicable == ["step 1 traffic: needs real HAProxy (not applicable on the scripted backend)"]
    assert result.virtual_seconds > 60


def test_failure_report_names_step_check_diff_and_trace(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + """\
  - advance: 1s
  - expect:
      config: {pod: haproxy-0, contains: backend default_nothere}
  - advance: 1s
""")
    assert result.status == "failed"
    assert result.steps_run == 2, "the run stops at the failing step"
    [failure] = result.failures
    assert (failure.step_index, failure.step_line, failure.check) == (1, 10, "config[haproxy-0].contains")
    assert failure.message == "missing 'backend default_nothere'"
    assert "+++ actual" in failure.diff and "-backend default_nothere" in failure.diff
    assert any("config.applied.to.pod" in line for line in failure.trace)
    report = result.report()
    assert report.startswith("FAILED t [scripted, seed 0]")
    assert "s.yaml:10: step 2 (expect): expectation config[haproxy-0].contains: missing" in report


def test_counter_and_event_failures(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + """\
  - expect:
      reloads: {pod: 0, total: {min: 3}}
      events: {absent: [deployment.completed], since: start, count: {validation.failed: 1}}
      metric: {name: haptic_reload_total, eq: 1}
""")
    checks = sorted((f.check, f.message) for f in result.failures)
    assert checks[0][0] == "events.absent" and checks[0][1].startswith("1 x deployment.completed since the start")
    assert checks[1] == ("events.count[validation.failed]", "expected == 1, got 0")
    assert checks[2][0] == "metric[haptic_reload_total]"
    assert checks[2][1].startswith("no such sample (similar: haptic_reloads_total")
    assert checks[3] == ("reloads[0].total", "expected >= 3, got 1")


def test_unknown_pod_is_a_clear_failure(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + "  - expect: {config: {pod: 7, contains: x}}\n")
    assert [f.message for f in result.failures] == ["no pod #7; there are 2: haproxy-0, haproxy-1"]


def test_fault_then_recovery_converges(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + f"""\
  - fault: {{inject: {{kind: dataplane_5xx, pod: 1, count: 2}}}}
  - apply: {service("api")}
  - advance: 3s
  - expect: {{config: {{pod: 1, not_contains: default_api}}, events: {{present: instance.deployment.failed}}}}
  - fault: {{clear: all}}
  - expect: {{converged: {{within: 10s}}, config: {{pod: 1, contains: default_api}}}}
""")
    assert result.status == "passed", result.report()


def test_kube_outage_with_duration_expires(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + f"""\
  - fault: {{inject: {{kind: kube_outage, duration: 30s}}}}
  - apply: {service("api")}
  - advance: 10s
  - expect: {{config: {{not_contains: default_api}}}}
  - expect: {{within: 30s, config: {{contains: default_api}}}}
""")
    assert result.status == "passed", result.report()


def test_converged_bound_exceeded_fails(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + f"""\
  - apply: {service("api")}
  - expect: {{converged: {{within: 1s}}}}
""")
    [failure] = result.failures
    assert failure.check == "converged"
    assert failure.message.startswith("not converged 1s after the last change (t=2.422s): 2 pod(s) not on")
    assert "+backend default_api" not in failure.diff and "-backend default_api" in failure.diff


def test_invariant_never_deploy_invalid(run_scenario: Runner) -> None:
    body = HEAD + f"""\
  - apply: {service("bad", invalid="true")}
  - advance: 10s
"""
    clean = run_scenario(body)
    assert clean.status == "passed", clean.report()
    buggy = run_scenario(body, bugs=frozenset({"deploy_invalid"}))
    assert [f.check for f in buggy.failures] == ["invariant never_deploy_invalid"] * 2, "one per pod"
    failure = buggy.failures[0]
    assert failure.category == "invariant" and failure.step_index == 1
    assert "config.applied.to.pod of config" in failure.message and "which failed validation" in failure.message


def test_invariant_single_deployer(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + "  - advance: 1s\n", bugs=frozenset({"double_deploy"}))
    [failure] = result.failures
    assert failure.step_index is None and failure.check == "invariant single_deployer"
    assert "replica-1 started deploying while replica-0 was deploying" in failure.message


def test_invariant_deployed_matches_render_after_settle(run_scenario: Runner) -> None:
    result = run_scenario(HEAD.replace("pods: 2", "pods: 2\n  settle: false") + "  - settle: 1m\n",
                          bugs=frozenset({"never_converge"}))
    [failure] = result.failures
    assert failure.check == "invariant deployed_matches_render"
    assert "1 pod(s) do not run the render of the current objects: haproxy-1" in failure.message


def test_invariant_converge_after_faults(run_scenario: Runner) -> None:
    result = run_scenario(HEAD.replace("pods: 2", "pods: 2\n  settle: false") + """\
invariants: {deployed_matches_render: false, converge_after_faults: 30s}
""".replace("invariants", "  - advance: 20s\n  - advance: 20s\ninvariants"), bugs=frozenset({"never_converge"}))
    [failure] = result.failures
    assert failure.step_index == 1 and failure.check == "invariant converge_after_faults"
    assert failure.message.startswith("t=40.000s: not converged 40.000s after the last change (bound 30s)")


def test_explore_mode_skips_expectations(run_scenario: Runner) -> None:
    result = run_scenario(HEAD + "  - expect: {config: {contains: nowhere}}\n", check_expectations=False)
    assert result.status == "passed"


def test_trace_is_deterministic_per_seed(run_scenario: Runner) -> None:
    body = HEAD + f"""\
  - apply: {service("api")}
  - settle:
  - expect: {{events: {{present: deployment.completed}}}}
"""
    first = run_scenario(body, seed=3)
    again = run_scenario(body, seed=3)
    other = run_scenario(body, seed=4)
    assert first.trace_lines == again.trace_lines
    assert first.trace_lines != other.trace_lines
    assert first.trace_lines[0].startswith('{"data":{') and '"type":"scenario.started"' in first.trace_lines[1]
