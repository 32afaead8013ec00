"""A database failure inside the commit function (`morphz_write_commit`), even in its last
statement, writes nothing of the transaction: no event, record, frame, revision, request,
relation, observation change or index intent, and the context keeps its version; it comes
out as Django's DatabaseError, and the next commit on the context goes through."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection

from memory.contexts import create_context
from memory.models import Context
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction

TABLES = {
    "memory_event": "context_id = %s",
    "memory_transactionrecord": "context_id = %s",
    "memory_frame": "context_id = %s",
    "memory_relation": "context_id = %s",
    "memory_indexintent": "context_id = %s",
    "memory_framerevision": "frame_id IN (SELECT id FROM memory_frame WHERE context_id = %s)",
    "memory_retirementrequest": "frame_id IN (SELECT id FROM memory_frame WHERE context_id = %s)",
}


@pytest.fixture
def failing_intents(db):
    """Inserting the search index intent of a frame named `boom` raises: the function's
    last statement fails after every other row of the commit was written."""
    with connection.cursor() as cur:
        cur.execute(
            "CREATE FUNCTION morphz_test_intent_boom() RETURNS trigger AS $$ BEGIN "
            "IF EXISTS (SELECT 1 FROM memory_frame WHERE id = NEW.frame_id AND frame_id = 'boom') "
            "THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        cur.execute(
            "CREATE TRIGGER morphz_test_intent_boom BEFORE INSERT ON memory_indexintent "
            "FOR EACH ROW EXECUTE FUNCTION morphz_test_intent_boom()"
        )
    context = create_context("failing", grace_ticks=2)
    append_event(context.pk, kind="tool_result", content="output")
    submit_transaction(
        context.pk, text="(context-tx (derive a (x 1)) (derive b (x 2)) (relate a r b) (retire b))"
    )
    return context


def state(context: Context) -> dict[str, object]:
    found: dict[str, object] = {}
    with connection.cursor() as cur:
        for table, where in TABLES.items():
            sql = f"SELECT md5(string_agg(t::text, ',' ORDER BY t.id)) FROM {table} t WHERE {where}"  # noqa: S608 - constant names
            cur.execute(sql, [context.pk])
            found[table] = cur.fetchone()[0]
        cur.execute(
            "SELECT version, last_seq, used_tokens FROM memory_context WHERE id = %s", [context.pk]
        )
        found["context"] = cur.fetchone()
    return found


def test_a_failure_in_the_last_statement_writes_nothing(failing_intents):
    context = failing_intents
    before = state(context)
    with pytest.raises(DatabaseError, match="boom"):
        submit_transaction(
            context.pk,
            text="(context-tx (derive boom (from a @e1) (x 1)) (revise a (x 2)) "
            "(unrelate a r b) (relate a r boom) (restore b) (retire a @e1))",
        )
    assert state(context) == before
    receipt = submit_transaction(context.pk, text="(context-tx (revise a (x 3)))").receipt
    assert receipt["version"] == 2
