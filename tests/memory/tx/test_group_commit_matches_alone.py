"""Group commit gives every transaction exactly the answer it would get alone (R6, R10,
R17, R20, R49): the same sixteen submissions (overlapping and independent, refused, in
conflict, naming a transaction event the group itself writes, idempotent twice and reused,
successor rule, relations) queued in one group on one context, and submitted one after the
other on an identical context, give the same receipts, errors and stored rows."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from memory.contexts import create_context
from memory.errors import MorphzError
from memory.models import Context, TransactionRecord
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction
from tests.memory.tx.test_group_commit import grouped, transactions_of


def setup(slug: str) -> Context:
    """Version 3: frames release, a, old (retiring), b; a r release; three observations."""
    context = create_context(slug, grace_ticks=5)
    for i in range(3):
        append_event(context.pk, kind="tool_result", content=f"output {i}")
    for text in (
        "(context-tx (derive release (goal ship)) (derive a (n 1)) (derive old (n 0)) "
        "(relate a r release))",
        "(context-tx (derive b (n 2)))",
        "(context-tx (retire old))",
    ):
        submit_transaction(context.pk, text=text)
    return context


# @e4-@e6 are the setup's transaction events; the group's first commit takes @e7.
SUBMISSIONS: list[dict[str, Any]] = [
    {"text": "(context-tx (derive x (from @e1) (n 1)))"},
    {"text": "(context-tx (base-version 3) (revise release (goal two)))"},
    {"text": "(context-tx (base-version 3) (revise release (goal three)))"},
    {"text": "(context-tx (retire @e1))"},
    {"text": "(context-tx (derive y (from x @e7) (n 2)))"},
    {"text": "(context-tx (base-version 3) (revise b (n 3)) (relate x r y))"},
    {"text": "(context-tx (derive z (n 1)))", "idempotency_key": "k"},
    {"text": "(context-tx (derive z (n 1)))", "idempotency_key": "k"},
    {"text": "(context-tx (derive w (n 1)))", "idempotency_key": "k"},
    {"text": "(context-tx (derive new (from old) (n 1)) (relate new supersedes old))"},
    {"text": "(context-tx (base-version 3) (unrelate a r release))"},
    {"text": "(context-tx (restore @e1) (retire a))"},
    {"text": "(context-tx (derive x (n 9)))"},
    {"text": "(context-tx (base-version 3) (revise y (n 3)))"},
    {"text": "(context-tx (revise a (n 2)) (relate a r release))"},
    {"text": "(context-tx (retire @e12 @e2))"},
]


def answer(result: Any) -> Any:
    if isinstance(result, MorphzError):
        details = [
            {**d, "transaction": TransactionRecord.objects.get(pk=d["transaction"]).text}
            if "transaction" in d
            else d
            for d in result.details
        ]
        return ["refused", result.code, details]
    return ["committed", result.event_seq, result.replayed, result.receipt]


def stored(context: Context) -> dict[str, Any]:
    """Every row the commits wrote, without row ids and timestamps."""
    queries = {
        "frames": "SELECT frame_id, revision, body::text, sources, status, protected, "
        "retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
        "token_estimate, created_version, changed_version FROM memory_frame "
        "WHERE context_id = %s ORDER BY frame_id",
        "revisions": "SELECT f.frame_id, r.revision, r.body::text, r.sources, r.version "
        "FROM memory_framerevision r JOIN memory_frame f ON f.id = r.frame_id "
        "WHERE f.context_id = %s ORDER BY 1, 2",
        "requests": "SELECT f.frame_id, q.generation, q.requested_tick, q.due_tick, q.reason, "
        "q.requested_version, q.outcome, q.resolved_tick, q.resolved_version "
        "FROM memory_retirementrequest q JOIN memory_frame f ON f.id = q.frame_id "
        "WHERE f.context_id = %s ORDER BY 1, 2",
        "relations": "SELECT s.frame_id, r.name, o.frame_id, r.created_version, "
        "r.removed_version FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id "
        "JOIN memory_frame o ON o.id = r.object_id WHERE r.context_id = %s ORDER BY 1, 2, 3, 4",
        "events": "SELECT seq, kind, content, payload, active, status_version "
        "FROM memory_event WHERE context_id = %s AND kind <> 'rejection' ORDER BY seq",
        "records": "SELECT committed_version, text, ops::text, receipt, frame_ids, "
        "idempotency_key FROM memory_transactionrecord WHERE context_id = %s "
        "AND status = 'committed' ORDER BY committed_version",
        # Their errors' details name record ids, which differ between the two contexts.
        "refused": "SELECT text, errors->'code' FROM memory_transactionrecord "
        "WHERE context_id = %s AND status <> 'committed' ORDER BY 1, 2::text",
        "context": "SELECT version, tick, used_tokens, in_maintenance FROM memory_context "
        "WHERE id = %s",
    }
    found = {}
    with connection.cursor() as cur:
        for name, sql in queries.items():
            cur.execute(sql, [context.pk])
            found[name] = json.loads(json.dumps(cur.fetchall(), default=str))
    return found


def test_a_group_answers_and_stores_what_one_by_one_does(transactional_db):
    alone = setup("one-by-one")
    expected = []
    for submission in SUBMISSIONS:
        try:
            expected.append(answer(submit_transaction(alone.pk, **submission)))
        except MorphzError as exc:
            expected.append(answer(exc))
    together = setup("grouped")
    results = grouped(together, SUBMISSIONS)
    assert [answer(r) for r in results] == expected
    committed = [r.receipt["version"] for r in results if not isinstance(r, MorphzError)]
    assert transactions_of(together, committed) == 1
    assert stored(together) == stored(alone)
