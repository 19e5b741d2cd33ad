"""A fake HAProxy Dataplane API v3 (ASGI), optionally driving a real haproxy process.

``FakeDataplane`` (instance.py) holds one pod's state; ``create_app`` (app.py) serves it;
``client_for`` (inprocess.py) reaches it without sockets; ``HAProxyDriver`` (haproxy_driver.py)
runs a real haproxy behind it through a ``ProcessRunner`` (process_runner.py). May import
``haptic.dataplane``; must not import kopf or the kubernetes client.
"""
