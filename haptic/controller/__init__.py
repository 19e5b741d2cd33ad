"""Event adapters: the components of the controller and its reinitialization loop.

The only package that knows the domain events of the event bus. Components are grouped by pipeline
stage: ``watch``, ``reconcile``, ``deploy``, ``publish``, ``observe`` (stages never import each
other), with ``loop`` above them (controller, iteration, leader election) and the shared modules
below them (``events``, ``context``, ``component``, ``ports``, ``metrics``). Must not import
``haptic.live``, kopf, the kubernetes client or ``simulator``: it reaches the world through ports.
"""
