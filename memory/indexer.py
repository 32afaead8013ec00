"""Search index worker (R34). Replaced by the search implementation."""

from __future__ import annotations


def start_background_indexer() -> None:
    return None
