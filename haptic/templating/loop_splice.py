"""``splice_safe``: whether the output of every ``{% fragment for %}`` loop goes, untouched, into the output of the
template rendered, so that the engine may join the loop's item texts into that output itself, once, instead of the
loop joining them (4 MB at 10,000 Ingresses) and Jinja copying that text again into the whole.

A loop's output is yielded straight into its template's output only where the loop stands "directly": in the
template's body, or in the body of an ``if``, ``for`` (not ``recursive``), ``with`` or ``autoescape`` there. In a
macro, a ``{% call %}`` or ``{% fragment %}`` body, a ``{% set %}`` or ``{% filter %}`` block, a ``{% block %}`` or a
recursive loop it is buffered, and what the template does with the buffer (store it, measure it, filter it) is not
known. An included template's output is its includer's where the ``include`` stands directly. So splicing is safe
when every loop stands directly, every ``include`` that may bring in a template holding one (a name that is not a
constant may bring in any) stands directly, no such template is imported, and no template extends another.

Reads template sources only (Jinja's parser); imports nothing of the engine.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from jinja2 import Environment, nodes

__all__ = ["splice_safe"]

#: the ``FragmentExtension`` method a ``{% fragment for %}`` tag calls
_LOOP_METHOD = "_render_each"

#: statements whose bodies are written straight into the template's output (a non-recursive ``for`` too)
_DIRECT = (nodes.Template, nodes.If, nodes.With, nodes.Scope, nodes.ScopedEvalContextModifier)


@dataclass
class _Found:
    loops: list[bool] = field(default_factory=list)  # each loop: whether it stands directly
    includes: list[tuple[str | None, bool]] = field(default_factory=list)  # (the name, None if not constant; direct)
    imports: list[str | None] = field(default_factory=list)
    extends: bool = False


def _is_loop(node: nodes.Node) -> bool:
    return (isinstance(node, nodes.CallBlock) and isinstance(node.call.node, nodes.ExtensionAttribute)
            and node.call.node.name == _LOOP_METHOD)


def _constant_name(expr: nodes.Expr) -> str | None:
    return expr.value if isinstance(expr, nodes.Const) and isinstance(expr.value, str) else None


def _walk(node: nodes.Node, direct: bool, found: _Found) -> None:
    if _is_loop(node):
        found.loops.append(direct)
        direct = False  # its body is the loop's (each item's text), not the template's output
    elif isinstance(node, nodes.Include):
        found.includes.append((_constant_name(node.template), direct))
    elif isinstance(node, nodes.Import | nodes.FromImport):
        found.imports.append(_constant_name(node.template))
    elif isinstance(node, nodes.Extends):
        found.extends = True
    keeps = isinstance(node, _DIRECT) or (isinstance(node, nodes.For) and not node.recursive)
    for child in node.iter_child_nodes():
        _walk(child, direct and keeps, found)


#: what each template holds, by (name, source): an engine is built at every config change, and parsing every
#: template again for this cost a fifth of building one (22 ms of the Ingress library's 86); the templates that
#: changed are parsed, the others looked up (every engine parses with the same extensions)
_FOUND: OrderedDict[tuple[str, str], _Found] = OrderedDict()
_KEEP = 1024


_LOCK = threading.Lock()  # engines are built off the event loop too (the webhook's checks)


def _found(env: Environment, name: str, source: str) -> _Found:
    key = (name, source)
    with _LOCK:
        known = _FOUND.get(key)
        if known is not None:
            _FOUND.move_to_end(key)
            return known
    known = _Found()
    _walk(env.parse(source, name), True, known)
    with _LOCK:
        _FOUND[key] = known
        while len(_FOUND) > _KEEP:
            _FOUND.popitem(last=False)
    return known


def splice_safe(env: Environment, sources: Mapping[str, str]) -> bool:
    """Whether every fragment loop of the templates ``sources`` (name -> source, parsed with ``env``) writes its
    output straight into the output of the template rendered (see the module docstring). False when none has a
    fragment loop (nothing to splice)."""
    found = {name: _found(env, name, source) for name, source in sources.items()}
    if any(f.extends for f in found.values()):
        return False
    holding = {name for name, f in found.items() if f.loops}
    if not holding:
        return False
    grown = True
    while grown:  # a template including one that holds a loop holds it too
        grown = False
        for name, f in found.items():
            if name not in holding and any(target is None or target in holding for target, _ in f.includes):
                holding.add(name)
                grown = True
    for f in found.values():
        if not all(f.loops):
            return False
        if any(not direct and (target is None or target in holding) for target, direct in f.includes):
            return False
        if any(target is None or target in holding for target in f.imports):
            return False
    return True
