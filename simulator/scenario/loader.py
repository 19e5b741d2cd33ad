"""Loads scenario files: YAML with line marks, matrix expansion, schema validation, referenced files.

Everything that can be wrong with a scenario is found here, before anything runs: YAML syntax, an
unknown step, a bad field, an undefined ``${variable}``, a missing or malformed referenced file. Each
problem reads ``file:line: field path: message``.

``load_cells(path)`` returns one ``ScenarioCell`` per matrix combination, each with every referenced
file already read (objects parsed, golden files as text), so a run never touches the disk for input.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .generators import FlatStep, GeneratorError, expand_generate, flatten, names_defined, summary
from .schema import (
    STEP_KINDS,
    ApplyStep,
    ConfigExpectation,
    DeleteStep,
    Expect,
    ExpectStep,
    FileRef,
    Generate,
    GenerateSource,
    KubeObject,
    MatrixValue,
    Scenario,
)
from .yaml_marks import Marks, YamlSyntaxError, load_with_marks

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{self.file}:{self.line}: {where}{self.message}"


class ScenarioLoadError(Exception):
    """A scenario that cannot run; ``problems`` lists each with file, line and field path."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class ScenarioCell:
    """One runnable scenario: a matrix combination with every referenced file read."""

    scenario: Scenario
    source: Path
    variables: Mapping[str, MatrixValue]
    #: resolved path (as given in the scenario) -> the objects of that YAML file
    object_files: Mapping[str, tuple[dict[str, Any], ...]]
    #: resolved path -> text (golden files)
    text_files: Mapping[str, str]
    marks: Marks
    config: dict[str, Any] = field(default_factory=dict)
    #: line of each step when the steps are not the file's own (repeats expanded, exploration inserts some)
    step_lines: tuple[int, ...] = ()
    #: where each step came from when the file's ``repeat``s were expanded ("" for the file's own steps)
    step_origins: tuple[str, ...] = ()
    #: what the file's generators made: (where, summary), in file order
    generated: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        if not self.variables:
            return self.scenario.name
        cell = ",".join(f"{k}={v}" for k, v in self.variables.items())
        return f"{self.scenario.name}[{cell}]"

    def step_line(self, index: int) -> int:
        if self.step_lines:
            return self.step_lines[index]
        return self.marks.line_of(("steps", index))

    def step_origin(self, index: int) -> str:
        return self.step_origins[index] if index < len(self.step_origins) else ""

    def objects(self, sources: Iterable[BaseModel]) -> list[dict[str, Any]]:
        """The objects of ``apply`` sources, in order: inline ones as given, files' documents in file order,
        generated ones in index order."""
        found: list[dict[str, Any]] = []
        for source in sources:
            if isinstance(source, FileRef):
                found.extend(dict(o) for o in self.object_files[source.file])
            elif isinstance(source, GenerateSource):
                found.extend(expand_generate(source.generate, self.variables))
            elif isinstance(source, KubeObject):
                found.append(source.model_dump(mode="json", exclude_none=True))
        return found


# -- substitution -----------------------------------------------------------------------------------


def _substitute(value: Any, variables: Mapping[str, MatrixValue], path: tuple[str | int, ...],
                undefined: list[tuple[tuple[str | int, ...], str]], deferred: frozenset[str] = frozenset()) -> Any:
    """Matrix substitution. Names a generator or repeat defines below a node (``deferred``) are left for
    the generator to resolve when it expands."""
    if isinstance(value, dict):
        deferred = deferred | names_defined(value)
        return {k: _substitute(v, variables, (*path, str(k)), undefined, deferred) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, variables, (*path, i), undefined, deferred) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        whole = _VAR_RE.fullmatch(value)
        if whole is not None:
            name = whole.group(1)
            if name in variables and name not in deferred:
                return variables[name]  # keeps the variable's type: ``pods: ${pods}`` stays an int
        def repl(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in deferred:
                return m.group(0)
            if name not in variables:
                undefined.append((path, name))
                return m.group(0)
            v = variables[name]
            return str(v).lower() if isinstance(v, bool) else str(v)
        return _VAR_RE.sub(repl, value)
    return value


def matrix_cells(matrix: Mapping[str, Sequence[MatrixValue]]) -> list[dict[str, MatrixValue]]:
    """Every combination, in the order of the matrix keys and values (the last key varies fastest)."""
    if not matrix:
        return [{}]
    keys = list(matrix)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(matrix[k] for k in keys))]


# -- validation errors -> problems ------------------------------------------------------------------


def _data_path(data: Any, loc: Sequence[str | int]) -> tuple[list[str | int], bool]:
    """Maps a pydantic ``loc`` to a path into the data, skipping union tags that are not keys.

    Returns the path and whether the whole ``loc`` was found (an "extra field" or "field required"
    error points below the last existing node).
    """
    path: list[str | int] = []
    node = data
    for part in loc:
        found = (isinstance(node, dict) and isinstance(part, str) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if found:
            node = node[part]
            path.append(part)
        # otherwise: a union tag or a missing field; stay at this node
    return path, len(path) == len(loc)


def _render_path(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _message(error: Mapping[str, Any], data: Any, path: Sequence[str | int]) -> tuple[str, Sequence[str | int]]:
    kind = error["type"]
    loc = [p for p in error["loc"] if isinstance(p, str | int)]
    if kind == "unknown_step":
        node: Any = data
        for p in path:
            node = node[p]
        if isinstance(node, dict):
            keys = list(node)
            unknown = [k for k in keys if k not in STEP_KINDS]
            if unknown and len(keys) == 1:
                close = difflib.get_close_matches(str(unknown[0]), STEP_KINDS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                return f"unknown step {unknown[0]!r}{hint}; a step is one of: {', '.join(STEP_KINDS)}", path
            if len(keys) > 1:
                return f"a step has exactly one kind, got keys {', '.join(map(str, keys))}", path
        return error["msg"], path
    if kind == "union_tag_invalid":
        ctx = error.get("ctx") or {}
        tag = str(ctx.get("tag", ""))
        expected = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",")]
        close = difflib.get_close_matches(tag, expected, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown kind {tag!r}{hint}; expected one of: {', '.join(expected)}", path
    if kind == "extra_forbidden":
        name = loc[-1] if loc else "?"
        return f"unknown field {name!r}", [*path, name] if path[-1:] != [name] else path
    if kind == "missing":
        name = loc[-1] if loc else "?"
        return f"missing required field {name!r}", path
    return error["msg"], path


def _problems(exc: ValidationError, data: Any, marks: Marks, base: tuple[str | int, ...] = (),
              prefix: str = "", remap: Callable[[Sequence[str | int]], list[str | int]] | None = None
              ) -> list[Problem]:
    """``remap`` turns a path into the validated data into one into the file (expanded repeats)."""
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for error in exc.errors():
        loc = [p for p in error["loc"] if isinstance(p, str | int)]
        path, _ = _data_path(data, loc)
        message, shown = _message(error, data, path)
        path = [*base, *path]
        shown = [*base, *shown]
        if remap is not None:
            path, shown = remap(path), remap(shown)
        message = prefix + message
        key = (_render_path(shown), message)
        if key in seen:
            continue
        seen.add(key)
        problems.append(Problem(marks.file, marks.line_of(path), _render_path(shown), message))
    return problems


# -- loading -----------------------------------------------------------------------------------------


def _read_yaml_file(path: Path, shown: str) -> list[tuple[Any, Marks]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioLoadError([Problem(shown, 1, "", f"cannot read: {exc.strerror or exc}")]) from None
    try:
        return load_with_marks(text, shown)
    except YamlSyntaxError as exc:
        raise ScenarioLoadError([Problem(exc.file, exc.line, "", exc.message)]) from None


def _file_refs(scenario: Scenario, step_paths: Sequence[tuple[str | int, ...]]
               ) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """(data path, file, "objects" | "text") of every file a scenario references."""
    if scenario.setup.config.file is not None:
        yield ("setup", "config", "file"), scenario.setup.config.file, "objects"
    for i, obj in enumerate(scenario.setup.objects):
        if isinstance(obj, FileRef):
            yield ("setup", "objects", i, "file"), obj.file, "objects"
    for s, step in enumerate(scenario.steps):
        at = step_paths[s]
        if isinstance(step, ApplyStep):
            for i, src in enumerate(step.apply):
                if isinstance(src, FileRef):
                    yield (*at, "apply", i, "file"), src.file, "objects"
        elif isinstance(step, DeleteStep):
            for i, target in enumerate(step.delete):
                if isinstance(target, FileRef):
                    yield (*at, "delete", i, "file"), target.file, "objects"
        elif isinstance(step, ExpectStep):
            yield from _expect_refs(step.expect, (*at, "expect"))


def _expect_refs(expect: Expect, at: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    for kind in ("config", "map", "file"):
        check = getattr(expect, kind)
        if check is not None and check.equals_file is not None:
            yield (*at, kind, "equals_file"), check.equals_file, "text"


def _load_objects(path: Path, shown: str, variables: Mapping[str, MatrixValue]) -> tuple[dict[str, Any], ...]:
    documents = _read_yaml_file(path, shown)
    objects: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for data, marks in documents:
        undefined: list[tuple[tuple[str | int, ...], str]] = []
        data = _substitute(data, variables, (), undefined)
        problems.extend(Problem(shown, marks.line_of(p), _render_path(p), f"undefined variable ${{{n}}}")
                        for p, n in undefined)
        items: list[tuple[Any, tuple[str | int, ...]]]
        if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
            items = [(item, ("items", i)) for i, item in enumerate(data["items"])]
        else:
            items = [(data, ())]
        for item, base in items:
            try:
                KubeObject.model_validate(item)
            except ValidationError as exc:
                problems.extend(_problems(exc, item, marks, base, "not a Kubernetes object: "))
                continue
            objects.append(item)
    if problems:
        raise ScenarioLoadError(problems)
    return tuple(objects)


def load_cells(path: str | Path, root: Path | None = None) -> list[ScenarioCell]:
    """Loads, expands and checks a scenario file. Raises ``ScenarioLoadError`` listing every problem.

    ``root`` only shortens the file names shown in messages.
    """
    source = Path(path)
    shown = _shown(source, root)
    documents = _read_yaml_file(source, shown)
    if len(documents) != 1:
        message = f"a scenario file holds one YAML document, found {len(documents)}"
        raise ScenarioLoadError([Problem(shown, 1, "", message)])
    raw, marks = documents[0]
    if not isinstance(raw, dict):
        raise ScenarioLoadError([Problem(shown, 1, "", "a scenario is a mapping (name, description, setup, steps)")])
    matrix = raw.get("matrix") or {}
    if not isinstance(matrix, dict) or not all(isinstance(v, list) and v for v in matrix.values()):
        raise ScenarioLoadError([Problem(shown, marks.line_of(("matrix",)), "matrix",
                                         "the matrix maps variable names to non-empty lists of values")])
    cells: list[ScenarioCell] = []
    problems: list[Problem] = []
    for variables in matrix_cells(matrix):
        undefined: list[tuple[tuple[str | int, ...], str]] = []
        body = {k: v for k, v in raw.items() if k != "matrix"}
        data = _substitute(body, variables, (), undefined)
        data["matrix"] = matrix
        cell_problems = [Problem(shown, marks.line_of(p), _render_path(p), f"undefined variable ${{{n}}}")
                         for p, n in undefined]
        before = len(cell_problems)
        flat = _flatten(data, shown, marks, cell_problems)
        if len(cell_problems) > before:  # a malformed repeat: its steps cannot be checked
            problems.extend(p for p in cell_problems if p not in problems)
            continue
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            cell_problems.extend(_problems(exc, data, marks, remap=_remapper(flat)))
            scenario = None
        if cell_problems:
            problems.extend(p for p in cell_problems if p not in problems)
            continue
        assert scenario is not None
        try:
            cells.append(_resolve(scenario, source, shown, variables, marks, flat))
        except ScenarioLoadError as exc:
            problems.extend(p for p in exc.problems if p not in problems)
    if problems:
        raise ScenarioLoadError(sorted(problems, key=lambda p: (p.file, p.line)))
    return cells


def _flatten(data: dict[str, Any], shown: str, marks: Marks, problems: list[Problem]) -> list[FlatStep] | None:
    """Expands the ``repeat`` steps of ``data`` in place; None when there are none (steps as in the file)."""
    steps = data.get("steps")
    if not isinstance(steps, list) or not any(isinstance(s, dict) and "repeat" in s for s in steps):
        return None
    try:
        flat = list(flatten(steps))
    except GeneratorError as exc:
        problems.append(Problem(shown, marks.line_of(exc.path), _render_path(exc.path), str(exc)))
        return None
    data["steps"] = [f.data for f in flat]
    return flat


def _remapper(flat: list[FlatStep] | None) -> Callable[[Sequence[str | int]], list[str | int]] | None:
    """Paths into the expanded steps -> paths into the file."""
    if flat is None:
        return None

    def remap(path: Sequence[str | int]) -> list[str | int]:
        if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int) and path[1] < len(flat):
            return [*flat[path[1]].path, *path[2:]]
        return list(path)

    return remap


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)


def _resolve(scenario: Scenario, source: Path, shown: str, variables: Mapping[str, MatrixValue],
             marks: Marks, flat: list[FlatStep] | None = None) -> ScenarioCell:
    base = source.parent
    object_files: dict[str, tuple[dict[str, Any], ...]] = {}
    text_files: dict[str, str] = {}
    problems: list[Problem] = []
    step_paths = [f.path for f in flat] if flat is not None else [("steps", i) for i in range(len(scenario.steps))]
    generated = _check_generators(scenario, step_paths, variables, shown, marks, problems)
    for at, name, kind in _file_refs(scenario, step_paths):
        target = base / name
        line = marks.line_of(at)
        if not target.is_file():
            problems.append(Problem(shown, line, _render_path(at), f"file not found: {name} (looked for {target})"))
            continue
        if kind == "text":
            text_files[name] = target.read_text(encoding="utf-8")
            continue
        if name in object_files:
            continue
        try:
            object_files[name] = _load_objects(target, str(target), variables)
        except ScenarioLoadError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ScenarioLoadError(problems)
    config = _config_object(scenario, object_files, shown, marks)
    lines = tuple(marks.line_of(p) for p in step_paths) if flat is not None else ()
    origins = tuple(f.origin for f in flat) if flat is not None else ()
    return ScenarioCell(scenario=scenario, source=source, variables=dict(variables), object_files=object_files,
                        text_files=text_files, marks=marks, config=config, step_lines=lines, step_origins=origins,
                        generated=tuple(generated))


def _generator_sites(scenario: Scenario, step_paths: Sequence[tuple[str | int, ...]]
                     ) -> Iterator[tuple[tuple[str | int, ...], str, Generate]]:
    """(data path, label, spec) of every ``generate`` source, in file order."""
    for i, obj in enumerate(scenario.setup.objects):
        if isinstance(obj, GenerateSource):
            yield ("setup", "objects", i, "generate"), f"setup.objects[{i}]", obj.generate
    for s, step in enumerate(scenario.steps):
        sources: Sequence[BaseModel] = step.apply if isinstance(step, ApplyStep) else \
            step.delete if isinstance(step, DeleteStep) else ()
        kind = "apply" if isinstance(step, ApplyStep) else "delete"
        for i, src in enumerate(sources):
            if isinstance(src, GenerateSource):
                yield (*step_paths[s], kind, i, "generate"), f"step {s + 1} ({kind})", src.generate


def _check_generators(scenario: Scenario, step_paths: Sequence[tuple[str | int, ...]],
                      variables: Mapping[str, MatrixValue], shown: str, marks: Marks,
                      problems: list[Problem]) -> list[tuple[str, str]]:
    """Expands every generator once: what it makes (for the report), or the problems of its template."""
    made: list[tuple[str, str]] = []
    reported: set[tuple[str | int, ...]] = set()
    for at, label, spec in _generator_sites(scenario, step_paths):
        try:
            objects = expand_generate(spec, variables)
        except GeneratorError as exc:
            where = (*at, *exc.path)
            if where not in reported:  # a repeated step expands the same template again
                reported.add(where)
                problems.append(Problem(shown, marks.line_of(where), _render_path(where), str(exc)))
            continue
        bad = False
        for n, obj in enumerate(objects):
            try:
                KubeObject.model_validate(obj)
            except ValidationError as exc:
                template = (*at, "template") if not isinstance(spec.template, list) else \
                    (*at, "template", n % len(spec.template))
                if template not in reported:
                    reported.add(template)
                    problems.extend(_problems(exc, obj, marks, template, f"generated object #{n}: not a Kubernetes "
                                                                         "object: "))
                bad = True
                break
        if not bad:
            made.append((label, summary(objects)))
    return made


def _config_object(scenario: Scenario, object_files: Mapping[str, tuple[dict[str, Any], ...]], shown: str,
                   marks: Marks) -> dict[str, Any]:
    src = scenario.setup.config
    if src.inline is not None:
        found = [src.inline.model_dump(mode="json", exclude_none=True)]
    else:
        assert src.file is not None
        found = list(object_files[src.file])
    configs = [o for o in found if o.get("kind") == "HAProxyTemplateConfig"]
    if len(configs) != 1:
        raise ScenarioLoadError([Problem(shown, marks.line_of(("setup", "config")), "setup.config",
                                         f"expected exactly one HAProxyTemplateConfig, found {len(configs)}")])
    return configs[0]


def find_scenario_files(paths: Sequence[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files as given; directories searched for ``*.yaml``), sorted.

    Files in directories named ``files``/``objects``/``golden`` or starting with ``_`` are data, not scenarios.
    """
    found: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found.extend(f for f in sorted(path.rglob("*.yaml")) if is_scenario_path(f))
        else:
            found.append(path)
    return found


_DATA_DIRS = {"files", "objects", "golden", "configs", "data"}


def is_scenario_path(path: Path) -> bool:
    return not any(part in _DATA_DIRS or part.startswith("_") for part in path.parent.parts[-3:]) and \
        not path.name.startswith("_") and path.name != "scenario.schema.json"


__all__ = [
    "ConfigExpectation",
    "Problem",
    "ScenarioCell",
    "ScenarioLoadError",
    "find_scenario_files",
    "is_scenario_path",
    "load_cells",
    "matrix_cells",
]
