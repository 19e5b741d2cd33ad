"""YAML loading that remembers where every value came from, so errors can name ``file:line``.

``load_with_marks`` returns plain Python data (dicts, lists, scalars as PyYAML's safe loader builds
them) and a ``Marks`` table from a path of keys/indexes to the 1-based line of that value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]


@dataclass
class Marks:
    """Line numbers (1-based) of the values of one YAML document, by path."""

    file: str
    lines: dict[Path, int] = field(default_factory=dict)

    def line_of(self, path: Sequence[str | int]) -> int:
        """The line of the deepest prefix of ``path`` that has a mark (the document start at worst)."""
        probe = tuple(path)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), 1)


class YamlSyntaxError(ValueError):
    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file = file
        self.line = line
        self.message = message


class _Builder:
    def __init__(self, marks: Marks) -> None:
        self.marks = marks
        self._scalars = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.marks.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            self._scalars.flatten_mapping(node)
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self._scalars.construct_object(key_node, deep=True)
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise YamlSyntaxError(self.marks.file, key_node.start_mark.line + 1, "mapping keys must be scalars")
                if key in result:
                    raise YamlSyntaxError(self.marks.file, key_node.start_mark.line + 1, f"duplicate key {key!r}")
                child = (*path, str(key))
                result[key] = self.build(value_node, child)
                # the key's own line is the better place to point at for "extra field" errors
                self.marks.lines[child] = key_node.start_mark.line + 1
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalars.construct_object(node, deep=True)


def load_with_marks(text: str, file: str) -> list[tuple[Any, Marks]]:
    """Every document of ``text`` with its marks. Raises ``YamlSyntaxError`` naming the line."""
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlSyntaxError(file, line, f"invalid YAML: {exc.problem or exc}") from None
    documents: list[tuple[Any, Marks]] = []
    for node in nodes:
        if node is None:
            continue
        marks = Marks(file)
        try:
            data = _Builder(marks).build(node, ())
        except yaml.constructor.ConstructorError as exc:
            line = exc.problem_mark.line + 1 if exc.problem_mark is not None else 1
            raise YamlSyntaxError(file, line, f"invalid YAML: {exc.problem}") from None
        documents.append((data, marks))
    return documents
