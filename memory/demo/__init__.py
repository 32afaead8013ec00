"""The demo context (R42)."""
