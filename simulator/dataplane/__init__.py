"""A fake HAProxy Dataplane API v3 (ASGI), optionally driving a real haproxy process.

``FakeDataplane`` (instance.py) holds one pod's state; ``create_app`` (app.py) serves it;
``client_for`` (inprocess.py) reaches it without sockets; ``HAProxyDriver`` (haproxy_driver.py)
runs a real haproxy behind it through a ``ProcessRunner`` (process_runner.py); ``DataplaneFleet``
(fleet.py) manages one instance per simulated pod; ``serve`` (http_server.py) puts one on 127.0.0.1.
May import
``haptic.dataplane``; must not import kopf or the kubernetes client.
"""
