"""Observe stage: what the controller shows about itself (log commentary and the event ring, metrics,
the state cache behind ``/debug/vars``, the debug providers).

No HTTP server here (``haptic.live.debug_server`` serves it). Must not import another stage or the loop.
"""
