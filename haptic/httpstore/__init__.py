"""The HTTP store behind ``http.fetch``: a two-version (accepted/pending) cache per URL and its fetcher.

Pure library: it is handed its httpx client and clock, fetches only when told to, never logs or
publishes (``haptic.controller`` does). It implements ``haptic.templating.http_fetch.HttpSource``;
it may import ``haptic.templating`` and ``haptic.core``, never ``haptic.controller`` or ``haptic.live``.
"""
