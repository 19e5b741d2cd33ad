"""Deploy stage: which pods get the config (discovery), when (scheduler), the push itself (deployer)
and the periodic drift repair.

Must not import another stage (watch, reconcile, publish, observe) or the loop.
"""
