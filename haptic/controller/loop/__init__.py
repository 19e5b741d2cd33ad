"""The controller loop: the reinitialization loop (``Controller``), one ``Iteration`` (bus, stores,
components, start order), leader election, the bus observer, and the webhook bound to the iteration.

The top of ``haptic.controller``: the only stage that knows every other stage. Must not import
``haptic.live``, kopf, the kubernetes client or ``simulator``.
"""
