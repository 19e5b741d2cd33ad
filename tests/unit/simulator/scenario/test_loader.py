"""The scenario loader: valid files, matrix expansion, and bad input named by file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simulator.scenario.loader import ScenarioLoadError, find_scenario_files, load_cells
from simulator.scenario.schema import AdvanceStep, ApplyStep, ExpectStep, FaultStep, SettleStep

CONFIG = """\
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: cfg, namespace: default}
spec: {}
"""


def write(tmp_path: Path, body: str, name: str = "s.yaml") -> Path:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioLoadError) as info:
        load_cells(path)
    return [str(p) for p in info.value.problems]


def test_valid_scenario_loads_with_typed_steps(tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n"
    )
    path = write(tmp_path, """\
        name: ok
        description: loads
        seed: 7
        setup:
          pods: 3
          config: {file: cfg.yaml}
        steps:
          - apply: {file: objs.yaml}
          - advance: 1m30s
          - settle:
          - fault: {inject: {kind: dataplane_slow, delay: 250ms, pod: 1}}
          - expect: {reloads: {delta: 1}, events: {present: [reconciliation.completed]}}
        """)
    [cell] = load_cells(path)
    steps = cell.scenario.steps
    assert [type(s) for s in steps] == [ApplyStep, AdvanceStep, SettleStep, FaultStep, ExpectStep]
    assert isinstance(steps[1], AdvanceStep) and steps[1].advance == 90.0
    assert isinstance(steps[0], ApplyStep)
    assert [o["metadata"]["name"] for o in cell.objects(steps[0].apply)] == ["a", "b"]
    assert cell.config["kind"] == "HAProxyTemplateConfig"
    assert cell.id == "ok" and cell.scenario.seed == 7 and cell.step_line(2) == 10


def test_matrix_expands_and_keeps_types(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: m
        description: matrix
        matrix: {pods: [1, 3], mode: [a, b]}
        setup: {pods: "${pods}", config: {file: cfg.yaml}}
        steps:
          - expect: {config: {contains: "mode ${mode} on ${pods}"}}
        """)
    cells = load_cells(path)
    assert [c.id for c in cells] == ["m[pods=1,mode=a]", "m[pods=1,mode=b]", "m[pods=3,mode=a]", "m[pods=3,mode=b]"]
    assert [c.scenario.setup.pods for c in cells] == [1, 1, 3, 3]
    step = cells[3].scenario.steps[0]
    assert isinstance(step, ExpectStep) and step.expect.config is not None
    assert step.expect.config.contains == ["mode b on 3"]


def test_unknown_step_is_named_with_line_and_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: bad
        description: d
        setup: {config: {file: cfg.yaml}}
        steps:
          - settle:
          - advanec: 5s
        """)
    [message] = problems(path)
    assert message.startswith(f"{path}:6: steps[1]: unknown step 'advanec' (did you mean 'advance'?)")


def test_bad_fields_each_reported_at_their_line(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: bad
        description: d
        setup: {config: {file: cfg.yaml}, podz: 2}
        steps:
          - expect:
              reloads:
                delt: 0
          - fault:
              inject: {kind: kube_outag}
          - settle: {timeout: 5 parsecs}
        """)
    found = problems(path)
    assert f"{path}:3: setup.podz: unknown field 'podz'" in found
    assert f"{path}:7: steps[0].expect.reloads.delt: unknown field 'delt'" in found
    assert any(m.startswith(f"{path}:9: steps[1].fault.inject: unknown kind 'kube_outag' (did you mean 'kube_outage'?)")
               for m in found)
    assert any(m.startswith(f"{path}:10: steps[2].settle.timeout:") and "5 parsecs" in m for m in found)


def test_missing_referenced_files_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: bad
        description: d
        setup: {config: {file: nope.yaml}}
        steps:
          - apply:
              - file: objects/missing.yaml
          - expect: {config: {equals_file: golden/x.cfg}}
        """)
    found = problems(path)
    assert found[0].startswith(f"{path}:3: setup.config.file: file not found: nope.yaml")
    assert found[1].startswith(f"{path}:6: steps[0].apply[0].file: file not found: objects/missing.yaml")
    assert found[2].startswith(f"{path}:7: steps[1].expect.config.equals_file: file not found: golden/x.cfg")


def test_bad_object_file_names_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\n"
                                        "metadata: {name: b}\n")
    path = write(tmp_path, """\
        name: bad
        description: d
        setup: {config: {file: cfg.yaml}}
        steps:
          - apply: {file: objs.yaml}
        """)
    [message] = problems(path)
    assert message == f"{tmp_path / 'objs.yaml'}:5: not a Kubernetes object: missing required field 'kind'"


def test_undefined_variable_and_yaml_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: bad
        description: d
        setup: {config: {file: cfg.yaml}}
        steps:
          - expect: {config: {contains: "${who}"}}
        """)
    assert problems(path) == [f"{path}:5: steps[0].expect.config.contains: undefined variable ${{who}}"]
    broken = write(tmp_path, "name: x\nsteps: [\n", name="broken.yaml")
    [message] = problems(broken)
    assert message.startswith(f"{broken}:3: invalid YAML")


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nname: b\n")
    assert problems(path) == [f"{path}:2: duplicate key 'name'"]


def test_find_scenario_files_skips_data_dirs(tmp_path: Path) -> None:
    (tmp_path / "basics" / "objects").mkdir(parents=True)
    (tmp_path / "basics" / "one.yaml").write_text("x: 1\n")
    (tmp_path / "basics" / "objects" / "svc.yaml").write_text("x: 1\n")
    (tmp_path / "basics" / "_shared.yaml").write_text("x: 1\n")
    assert find_scenario_files([tmp_path]) == [tmp_path / "basics" / "one.yaml"]
