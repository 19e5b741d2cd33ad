"""Core runtime: clock, event bus, component base and lifecycle registry.

Pure and domain-agnostic: knows nothing about Kubernetes or HAProxy. Must not import any other
``haptic`` subpackage.
"""
