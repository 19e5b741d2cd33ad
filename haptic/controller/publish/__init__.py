"""Publish stage: what the controller writes back to the cluster (the ``HAProxyCfg``, the config
status, the Ingress status).

Must not import another stage (watch, reconcile, deploy, observe) or the loop.
"""
