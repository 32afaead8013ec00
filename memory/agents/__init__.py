"""Agents plug in (R45-R47): the model protocol for a context and taking model replies apart.

How it works: docs/internals.md, section `memory/agents/__init__.py`."""
