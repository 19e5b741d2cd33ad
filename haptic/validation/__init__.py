"""Validation of rendered configs with the real ``haproxy -c`` and the validationTests runner.

``process`` (the command-runner port and its subprocess/asyncio/blocking adapters),
``haproxy_check`` (``HAProxyValidator``), ``checksum``, ``capabilities`` (``haproxy -vv``),
``setup`` (stores from fixtures, render inputs from a spec), ``assertions``, ``testrunner`` and
``config_file`` (YAML → expanded, validated, compiled config for the CLI).

Pure: runs processes only through the runner it is handed. Must not import ``haptic.controller`` or
``haptic.live``.
"""
