"""pytest plugin collecting ``scenarios/**/*.yaml`` (filled in by the scenarios work)."""
