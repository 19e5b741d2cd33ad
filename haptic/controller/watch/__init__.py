"""Watch stage: the components that keep stores in sync with the API (resource watchers, the config and
credentials watchers/loaders, the index synchronization tracker).

Must not import another stage (reconcile, deploy, publish, observe) or the loop.
"""
