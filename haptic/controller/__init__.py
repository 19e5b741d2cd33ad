"""Event adapters: the components of the controller and its reinitialization loop.

The only package that knows the domain events of the event bus. Must not import ``haptic.live``,
kopf, the kubernetes client or ``simulator``: it reaches the world through ports.
"""
