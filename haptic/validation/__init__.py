"""Validation of rendered configs with the real ``haproxy -c`` and the validationTests runner.

Pure: runs processes only through the runner it is handed. Must not import ``haptic.controller`` or
``haptic.live``.
"""
