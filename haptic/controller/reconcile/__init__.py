"""Reconcile stage: store changes to a reconciliation trigger (debounced), then render and validate.

Must not import another stage (watch, deploy, publish, observe) or the loop.
"""
