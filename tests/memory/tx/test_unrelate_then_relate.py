"""Unrelate then relate the same relation in one transaction (R11): the live row is removed
and a new one created at the commit's version; unrelating it once more in the same
transaction leaves no live row. Neither may break the one-live-row constraint
(`relation_live_unique`) nor leave a relation live that the receipt says was removed."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.models import Context
from memory.tx.engine import submit_transaction


@pytest.fixture
def related(db) -> Context:
    context = create_context("relations")
    submit_transaction(
        context.pk, text="(context-tx (derive a (x 1)) (derive b (x 2)) (relate a r b))"
    )
    return context


def relation_rows(context: Context) -> list[tuple[int, int | None]]:
    """(created_version, removed_version) of every `a r b` row, oldest first."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT r.created_version, r.removed_version FROM memory_relation r "
            "JOIN memory_frame s ON s.id = r.subject_id JOIN memory_frame o ON o.id = r.object_id "
            "WHERE r.context_id = %s AND s.frame_id = 'a' AND r.name = 'r' AND o.frame_id = 'b' "
            "ORDER BY r.id",
            [context.pk],
        )
        return list(cur.fetchall())


def test_unrelate_then_relate_replaces_the_live_row(related):
    receipt = submit_transaction(
        related.pk, text="(context-tx (unrelate a r b) (relate a r b))"
    ).receipt
    assert receipt["version"] == 2
    assert relation_rows(related) == [(1, 2), (2, None)]


def test_unrelate_then_relate_beside_revisions_of_both_frames(related):
    submit_transaction(
        related.pk,
        text="(context-tx (revise a (x 3)) (revise b (x 4)) (unrelate a r b) (relate a r b))",
    )
    assert relation_rows(related) == [(1, 2), (2, None)]


def test_unrelate_relate_unrelate_leaves_it_removed(related):
    submit_transaction(
        related.pk, text="(context-tx (unrelate a r b) (relate a r b) (unrelate a r b))"
    )
    assert relation_rows(related) == [(1, 2)]
    # And it can be related again later, once.
    submit_transaction(related.pk, text="(context-tx (relate a r b))")
    assert relation_rows(related) == [(1, 2), (3, None)]
