"""Generators: ``generate`` objects and ``repeat`` steps, expanded at load time, errors with file:line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simulator.scenario.generators import GeneratorError, evaluate, render
from simulator.scenario.loader import ScenarioLoadError, load_cells
from simulator.scenario.schema import AdvanceStep, PatchStep
from tests.unit.simulator.scenario.conftest import CONFIG, Runner, service

HEAD = """\
name: g
description: generators
setup:
  pods: 1
  config: {file: cfg.yaml}
"""

INGRESS = """\
          apiVersion: networking.k8s.io/v1
          kind: Ingress
          metadata: {name: "web-${i}", namespace: default, labels: {zone: "${zone}"}}
          spec: {rules: [{host: "${host}"}]}
"""


def load(tmp_path: Path, body: str) -> list:  # type: ignore[type-arg]
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(body))
    return load_cells(path)


def test_expressions_are_names_or_integer_arithmetic() -> None:
    assert evaluate("i", {"i": 7}) == 7
    assert evaluate("i // 250 + 1", {"i": 501}) == 3
    assert evaluate(" (i % 3) * -2 ", {"i": 5}) == -4
    with pytest.raises(GeneratorError, match="undefined variable 'j'"):
        evaluate("j + 1", {"i": 1})
    with pytest.raises(GeneratorError, match="only names, integers"):
        evaluate("__import__('os')", {})
    with pytest.raises(GeneratorError, match="arithmetic needs integers"):
        evaluate("zone + 1", {"zone": "a"})
    assert render({"port": "${p}", "name": "x-${p}", "flag": "${b}-y"}, {"p": 80, "b": True}) == \
        {"port": 80, "name": "x-80", "flag": "true-y"}


def test_generate_expands_with_cycled_and_templated_vars(tmp_path: Path) -> None:
    [cell] = load(tmp_path, HEAD + """\
  objects:
    - generate:
        count: 4
        start: 1
        vars: {zone: [a, b], host: "web-${i}.${zone}.example"}
        template:
""" + INGRESS + """\
steps:
  - advance: 1s
""")
    objects = cell.objects(cell.scenario.setup.objects)
    assert [o["metadata"]["name"] for o in objects] == ["web-1", "web-2", "web-3", "web-4"]
    assert [o["metadata"]["labels"]["zone"] for o in objects] == ["a", "b", "a", "b"]
    assert objects[2]["spec"]["rules"][0]["host"] == "web-3.a.example"
    assert cell.generated == (("setup.objects[0]", "4 object(s): 4 x Ingress default/web-1 .. default/web-4"),)


def test_matrix_variables_reach_generators_and_names_are_scoped(tmp_path: Path) -> None:
    cells = load(tmp_path, HEAD + """\
matrix: {n: [2, 3]}
steps:
  - apply:
      generate:
        count: ${n}
        template: {apiVersion: v1, kind: Service, metadata: {name: "s-${i}-of-${n}"}}
""")
    names = [[o["metadata"]["name"] for o in c.objects(c.scenario.steps[0].apply)] for c in cells]
    assert names == [["s-0-of-2", "s-1-of-2"], ["s-0-of-3", "s-1-of-3", "s-2-of-3"]]


def test_repeat_expands_steps_with_the_iteration_and_pauses_between(tmp_path: Path) -> None:
    [cell] = load(tmp_path, HEAD + """\
steps:
  - repeat:
      times: 3
      every: 200ms
      steps:
        - patch: {kind: Service, name: "svc-${iteration}", patch: {metadata: {labels: {k: "v${iteration}"}}}}
  - advance: 1s
""")
    steps = cell.scenario.steps
    assert [type(s).__name__ for s in steps] == ["PatchStep", "AdvanceStep", "PatchStep", "AdvanceStep", "PatchStep",
                                                 "AdvanceStep"]
    assert isinstance(steps[4], PatchStep) and steps[4].patch.name == "svc-2"
    assert isinstance(steps[1], AdvanceStep) and steps[1].advance == pytest.approx(0.2)
    assert [cell.step_line(i) for i in range(6)] == [11, 9, 11, 9, 11, 12]
    assert cell.step_origin(2) == "repeat 2/3 of step 1" and cell.step_origin(5) == ""


def test_nested_repeats_keep_their_own_variables(tmp_path: Path) -> None:
    [cell] = load(tmp_path, HEAD + """\
steps:
  - repeat:
      times: 2
      var: outer
      steps:
        - repeat:
            times: 2
            steps:
              - delete: {kind: Service, name: "s-${outer}-${iteration}"}
""")
    names = [s.delete[0].name for s in cell.scenario.steps]
    assert names == ["s-0-0", "s-0-1", "s-1-0", "s-1-1"]
    assert cell.step_origin(3) == "repeat 2/2 of step 1, repeat 2/2 of step 1"


def test_problems_point_into_the_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioLoadError) as caught:
        load(tmp_path, HEAD + """\
  objects:
    - generate:
        count: 2
        template: {apiVersion: v1, kind: Service, metadata: {name: "s-${i + q}"}}
steps:
  - advance: 1s
""")
    assert "s.yaml:9: setup.objects[0].generate.template.metadata.name: undefined variable 'q'" in str(caught.value)
    with pytest.raises(ScenarioLoadError) as caught:
        load(tmp_path, HEAD + """\
steps:
  - repeat:
      times: 2
      steps:
        - advanc: 1s
""")
    text = str(caught.value)
    assert "s.yaml:10: steps[0].repeat.steps[0]: unknown step 'advanc' (did you mean 'advance'?)" in text
    with pytest.raises(ScenarioLoadError, match=r"s.yaml:8: steps\[0\].repeat.times: Input should be greater"):
        load(tmp_path, HEAD + "steps:\n  - repeat:\n      times: 0\n      steps: [{advance: 1s}]\n")


def test_generated_objects_are_applied_deleted_and_reported(run_scenario: Runner) -> None:
    result = run_scenario(f"""\
name: t
description: generate on the scripted backend
setup:
  pods: 1
  config: {{file: cfg.yaml}}
  objects: [{service("web")}]
steps:
  - apply:
      generate:
        count: 3
        template: {{apiVersion: v1, kind: Service, metadata: {{name: "gen-${{i}}"}}}}
  - settle:
  - expect: {{config: {{contains: [backend default_gen-0, backend default_gen-2]}}}}
  - delete: {{generate: {{count: 2, template: {{apiVersion: v1, kind: Service, metadata: {{name: "gen-${{i}}"}}}}}}}}
  - settle:
  - expect: {{config: {{contains: backend default_gen-2, not_contains: backend default_gen-1}}}}
""")
    assert result.status == "passed", result.report()
    assert result.generated == ["step 1 (apply): 3 object(s): 3 x Service gen-0 .. gen-2",
                                "step 4 (delete): 2 object(s): 2 x Service gen-0, gen-1"]
    assert "generated: step 1 (apply)" in result.report()
