"""R68: a read that fails on its replica after the replica was chosen (the server went
away mid-read, replay cancelled the query, anything) is answered again by the primary: the
caller sees the right answer, never the replica's error. Made certain here by a replica
login that may read the context row (so the replica is chosen) but not the frames."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from memory.contexts import create_context, issue_token
from memory.replicas import live_replicas
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import ALIAS, primary_lsn, primary_settings, replica_db, use_replica

READER = "mz_context_row_reader"


def on_primary(*statements: str) -> None:
    primary = primary_settings()
    with psycopg.connect(
        host=primary["HOST"],
        port=primary["PORT"] or 5432,
        user=primary["USER"] or "postgres",
        dbname=primary["NAME"],
        autocommit=True,
    ) as conn:
        for statement in statements:
            conn.execute(statement)


@pytest.fixture
def narrow_replica(replica: Standby) -> Iterator[Standby]:
    on_primary(
        f"DO $$ BEGIN CREATE ROLE {READER} LOGIN; EXCEPTION WHEN duplicate_object THEN "
        "NULL; END $$",
        f"GRANT SELECT ON memory_context TO {READER}",
    )
    use_replica(replica, user=READER)
    yield replica
    use_replica(replica)
    on_primary(f"REVOKE ALL ON memory_context FROM {READER}")


@replica_db
def test_the_primary_answers_a_read_the_replica_failed(narrow_replica: Standby) -> None:
    ctx = create_context("refused")
    api = Api("refused", issue_token(ctx, name="agent").raw)
    api.commit('(context-tx (reason "first") (derive note (text "one")))')
    narrow_replica.wait_for(primary_lsn())
    frame = api.get("frames/note/", {"min_version": 1})
    assert frame.status_code == 200, frame.json()
    assert frame.json()["body"] == {"text": "one"}
    search = api.get("search/", {"q": "note", "min_version": 1})
    assert search.status_code == 200, search.json()
    # The replica still answers: only that read moved, the replica is not left out.
    assert live_replicas() == [ALIAS]
