"""Jinja2 sandbox, filters, render context and the shipped template libraries.

``engine`` (``TemplateEngine``, ``TemplateSet``, ``RenderInputs``, ``RenderResult``), ``sandbox``
(the sandboxed environment and render deadline), ``filters``, ``context`` (store views, path
resolver, file registry, server slots), ``safety`` (hostile-input checks), ``current_config``,
``capabilities``, ``postprocess``, ``ingress_helpers``, ``dialects`` (the annotation tables of other
controllers), ``dialect_helpers`` (their template helpers), ``migration`` (the migration report) and
``libraries`` (package data).

Pure: must not import ``haptic.controller`` or ``haptic.live``; runs no processes.
"""
