"""A fake Kubernetes API server: object store, watch, patch, apply, discovery, faults; in-process and over HTTP."""
