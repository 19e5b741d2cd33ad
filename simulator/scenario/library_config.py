"""``scenarios/configs/ingress-library.yaml``: the shipped Ingress library config, expanded, for scenarios.

The scenario copy is the example config (``examples/ingress/haproxytemplateconfig.yaml``) with the
scenario cluster's names and timings (``simulator.cluster_objects.ingress_library_config``), the
template library merged in (a real API server checks the CRD schema, which requires
``haproxyConfig``), and one setting of its own: ``maxconn`` 4096 instead of the library's 50000.
HAProxy needs about two file descriptors per connection it accepts and refuses to start (or reload)
when ``ulimit -n`` is below that: 50000 needs 100041, more than a developer's shell or a CI runner
usually allows, and the ``local`` tier runs haproxy under the caller's limit. Regenerate after a
library change::

    python -m simulator.scenario.library_config > scenarios/configs/ingress-library.yaml

(a test fails while the committed file differs from this output).
"""

from __future__ import annotations

import sys

import yaml

from simulator.cluster_objects import JSON, ingress_library_config
from simulator.local.objects import expand_template_libraries

#: connections per haproxy process in the scenario copy (see the module docstring)
SCENARIO_MAXCONN = 4096

HEADER = """\
# The HAProxyTemplateConfig of the shipped Ingress template library (haptic/templating/libraries/ingress.yaml),
# expanded: TLS from kubernetes.io/tls Secrets, path types, default backends, server slots. Generated, do not
# edit: python -m simulator.scenario.library_config > scenarios/configs/ingress-library.yaml
# (README: "The Ingress library config of the scenarios"). Settings differing from the library's defaults:
# maxconn 4096 (the library's 50000 needs `ulimit -n` >= 100041 where haproxy runs, the local tier included).
"""


GATEWAY_HEADER = """\
# The HAProxyTemplateConfig of the shipped Gateway API template library (haptic/templating/libraries/gateway.yaml),
# expanded. Generated, do not edit: python -m simulator.scenario.library_config gateway >
# scenarios/configs/gateway-library.yaml. Settings differing from the library's defaults: maxconn 4096, serverSlots 4.
"""


COMBINED_HEADER = """\
# The Ingress example config with both shipped template libraries (annotation "ingress,gateway"), expanded: Ingresses
# on the Ingress library's 8080/8443, Gateway listeners on their own ports. Generated, do not edit:
# python -m simulator.scenario.library_config ingress,gateway > scenarios/configs/ingress-gateway-library.yaml
"""


DIALECT_HEADER = """\
# The Ingress example config with the shipped "{name}" annotation-dialect library (which extends the ingress and
# annotations libraries) and IngressClass "{cls}", expanded. Generated, do not edit:
# python -m simulator.scenario.library_config {name} > scenarios/configs/{name}-library.yaml
"""

#: annotation-dialect libraries -> the IngressClass their scenario config serves
DIALECT_CLASSES = {"nginx": "nginx", "haproxytech": "haproxy"}


def scenario_library_config(example: str = "ingress") -> JSON:
    """``ingress``, ``gateway``, ``ingress,gateway`` (the Ingress example with both libraries) or a dialect
    library (``nginx``, ``haproxytech``: the Ingress example with that library and its IngressClass)."""
    extra: JSON = {"maxconn": SCENARIO_MAXCONN}
    if example in DIALECT_CLASSES:
        extra["ingressClass"] = DIALECT_CLASSES[example]
        config = ingress_library_config(extra_context=extra, expanded=False)
        config["metadata"]["annotations"]["haproxy-haptic.org/template-libraries"] = example
        return expand_template_libraries(config)
    if example == "gateway":
        extra["serverSlots"] = 4
    config = ingress_library_config(extra_context=extra, example="ingress" if "," in example else example,
                                    slots=4 if example == "gateway" else 10, expanded=False)
    if "," in example:
        config["metadata"]["annotations"]["haproxy-haptic.org/template-libraries"] = example
    return expand_template_libraries(config)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the templates) as ``|`` blocks, so that the file reads like the library."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render(example: str = "ingress") -> str:
    header = {"gateway": GATEWAY_HEADER, "ingress,gateway": COMBINED_HEADER}.get(example, HEADER)
    if example in DIALECT_CLASSES:
        header = DIALECT_HEADER.format(name=example, cls=DIALECT_CLASSES[example])
    return header + yaml.dump(
        scenario_library_config(example), Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


if __name__ == "__main__":
    sys.stdout.write(render(sys.argv[1] if len(sys.argv) > 1 else "ingress"))
