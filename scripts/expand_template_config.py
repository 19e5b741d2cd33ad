"""Prints a HAProxyTemplateConfig with the template libraries its annotation names merged into its spec.

A real API server checks custom resources against the CRD schema, which requires
``spec.watchedResources`` and ``spec.haproxyConfig``: a config that gets them from a library must be
applied expanded. Usage (the deploy/ config is produced this way)::

    python scripts/expand_template_config.py deploy/config/haproxytemplateconfig.yaml \\
        > deploy/haproxytemplateconfig.yaml
    python scripts/expand_template_config.py deploy/gateway/config/haproxytemplateconfig.yaml \\
        > deploy/gateway/haproxytemplateconfig.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from simulator.local.objects import LIBRARIES_ANNOTATION, expand_template_libraries

HEADER = """\
# GENERATED from {source} by scripts/expand_template_config.py: the "{libraries}" template
# librar{plural} merged into the spec (a real API server requires spec.watchedResources and
# spec.haproxyConfig, so library-based configs are applied expanded). Edit the source, then run:
#   python scripts/expand_template_config.py {source} > {target}
"""


class _LiteralDumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _str)


def _target(source: str) -> str:
    """Where the expanded config goes: beside the ``config/`` folder holding its source."""
    path = Path(source)
    if path.parent.name == "config":
        return str(path.parent.parent / path.name)
    return "deploy/haproxytemplateconfig.yaml"


def render(source: str, document: dict[str, Any], target: str | None = None) -> str:
    libraries = str(((document.get("metadata") or {}).get("annotations") or {}).get(LIBRARIES_ANNOTATION, ""))
    header = HEADER.format(source=source, libraries=libraries, plural="ies" if "," in libraries else "y",
                           target=target or _target(source))
    body = yaml.dump(expand_template_libraries(document), Dumper=_LiteralDumper, sort_keys=False,
                     allow_unicode=True, width=120)
    return header + body


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    source = argv[0]
    document = yaml.safe_load(Path(source).read_text())
    sys.stdout.write(render(source, document))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
