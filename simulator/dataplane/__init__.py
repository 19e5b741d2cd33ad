"""A fake HAProxy Dataplane API v3 (ASGI), optionally driving a real haproxy process."""
