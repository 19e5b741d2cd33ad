"""The validating admission webhook as pure logic: review parsing, the dry-run proposal check, the
``ValidatingWebhookConfiguration``.

No HTTP (``haptic.live.webhook_server`` serves it) and no event bus (``haptic.controller.loop.webhook_binding``
binds it to the running controller and turns decisions into domain events). Must not import
``haptic.controller``, ``haptic.live``, kopf, the kubernetes client or ``simulator``.
"""
