"""Jinja2 sandbox, filters, render context and the shipped template libraries.

Pure: must not import ``haptic.controller`` or ``haptic.live``.
"""
