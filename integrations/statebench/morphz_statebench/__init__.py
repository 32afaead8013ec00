"""Morphz as the memory of STATE-Bench agents (see README.md beside this package)."""

__version__ = "0.1.0"
