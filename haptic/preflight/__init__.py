"""What ``haptic preflight`` checks, as pure logic: the controller's required permissions, the checks'
verdicts from observations (CRDs, access reviews, HAProxy pods, webhook certificates) and the table.

Pure: no I/O it was not handed. Must not import ``haptic.controller``, ``haptic.live`` or the
``kubernetes`` client; the command (``haptic.commands.preflight``) gathers the observations.
"""
