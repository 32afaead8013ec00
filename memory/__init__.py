"""Morphz's domain: the rules of a context's memory, as plain Python beside the Django models.

How it works: docs/internals.md, section `memory/__init__.py`."""
