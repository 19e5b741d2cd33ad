"""HAPTIC: a template-driven HAProxy ingress controller for Kubernetes.

Subpackages are layered (see DESIGN.md): pure libraries (core, config, k8s, templating, dataplane,
validation), event adapters (controller) and adapters to the world (live). This package must never
import ``simulator``.
"""

__version__ = "0.1.0"
