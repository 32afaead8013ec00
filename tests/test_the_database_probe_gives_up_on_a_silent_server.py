"""The database probe (readiness, and every command's hint) answers even when the server
takes the connection and then never answers: here a lock held on the migration table.
Before, `GET /api/health/ready/` waited as long as the lock was held."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
from django.db import connection

from morphz import database_hint
from morphz.database_hint import UNREACHABLE, find_database_problem

LOCK_HELD = 8.0


def _connect() -> psycopg.Connection[Any]:
    db = connection.settings_dict
    params = {"dbname": db["NAME"], "user": db["USER"], "password": db["PASSWORD"]}
    params.update(host=db["HOST"], port=db["PORT"])
    return psycopg.connect(**{k: v for k, v in params.items() if v})


def test_a_server_that_does_not_answer_is_not_ready(db: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(database_hint, "ANSWER_SECONDS", 0.3, raising=False)
    with _connect() as locker:
        locker.execute("LOCK TABLE django_migrations IN ACCESS EXCLUSIVE MODE")
        # The lock goes after LOCK_HELD s, so a probe that waits for it ends (and fails here).
        release = threading.Timer(LOCK_HELD, locker.rollback)
        release.start()
        began = time.monotonic()
        problem = find_database_problem()
        waited = time.monotonic() - began
        release.join()
    assert problem is not None and problem.kind == UNREACHABLE
    assert "did not answer in 0.3 s" in problem.line
    assert waited < LOCK_HELD


def test_a_server_that_answers_is_ready(db: Any) -> None:
    assert find_database_problem() is None
