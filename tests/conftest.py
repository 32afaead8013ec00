"""Test fixtures: a real PostgreSQL (embedded unless DATABASE_URL is set) and a small cast
of contexts built through the real `memory` functions."""

from __future__ import annotations

from morphz.embedded_db import ensure_database

# Before pytest-django connects: start (or join) the embedded server.
ensure_database()


def pytest_configure(config: object) -> None:
    # Tests drain the search outbox themselves; no background thread on the test database.
    from django.conf import settings

    settings.MORPHZ_INDEXER_IN_PROCESS = False
