"""HAProxy config parser, sync planner, Dataplane API v3 client, synchronizer and auxiliary files.

Pure apart from the httpx client it is handed a transport for. Must not import ``haptic.controller``
or ``haptic.live``.
"""
