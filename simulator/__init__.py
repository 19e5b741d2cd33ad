"""The simulator: fake Kubernetes API, fake Dataplane API, virtual time, scenarios.

May import ``haptic``; ``haptic`` must never import this package. Must not import kopf or the
kubernetes client (tests drive the fakes with them from outside).
"""
