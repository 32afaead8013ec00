"""Database constraints make races and bad values fail loudly (R1–R8)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from memory.models import Context, Event, Frame, FrameRevision, Relation, TransactionRecord


def integrity_error(fn) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()


def test_event_seq_is_unique_per_context(release_team):
    release_team.observe("one")
    integrity_error(
        lambda: Event.objects.create(context=release_team.context, seq=1, kind="tool_result")
    )


def test_event_kind_must_be_known(release_team):
    integrity_error(
        lambda: Event.objects.create(context=release_team.context, seq=5, kind="gossip")
    )


def test_event_idempotency_key_is_unique_per_context(release_team):
    release_team.observe("one", idempotency_key="k")
    integrity_error(
        lambda: Event.objects.create(
            context=release_team.context, seq=9, kind="tool_result", idempotency_key="k"
        )
    )


def test_frame_id_is_unique_per_context(release_team):
    release_team.commit("(context-tx (derive a (x y)))")
    integrity_error(
        lambda: Frame.objects.create(
            context=release_team.context,
            frame_id="a",
            body={},
            created_version=1,
            changed_version=1,
        )
    )


def test_frame_status_must_be_known(release_team):
    integrity_error(
        lambda: Frame.objects.create(
            context=release_team.context,
            frame_id="b",
            body={},
            status="zombie",
            created_version=1,
            changed_version=1,
        )
    )


def test_retiring_frame_needs_due_tick(release_team):
    integrity_error(
        lambda: Frame.objects.create(
            context=release_team.context,
            frame_id="c",
            body={},
            status="retiring",
            created_version=1,
            changed_version=1,
        )
    )


def test_frame_revision_is_unique(release_team):
    release_team.commit("(context-tx (derive a (x y)))")
    existing = FrameRevision.objects.get()
    integrity_error(
        lambda: FrameRevision.objects.create(
            frame=existing.frame, revision=1, body={}, transaction=existing.transaction, version=1
        )
    )


def test_committed_version_is_unique_per_context(release_team):
    release_team.commit("(context-tx (derive a (x y)))")
    integrity_error(
        lambda: TransactionRecord.objects.create(
            context=release_team.context,
            author="x",
            author_kind="agent",
            status="committed",
            committed_version=1,
            text="",
        )
    )


def test_transaction_status_must_be_known(release_team):
    integrity_error(
        lambda: TransactionRecord.objects.create(
            context=release_team.context, author="x", author_kind="agent", status="maybe", text=""
        )
    )


def test_live_relation_is_unique(release_team):
    release_team.commit("(context-tx (derive a (x y)) (derive b (x y)) (relate a supports b))")
    relation = Relation.objects.get()
    integrity_error(
        lambda: Relation.objects.create(
            context=relation.context,
            subject=relation.subject,
            name="supports",
            object=relation.object,
            created_version=2,
        )
    )


def test_context_thresholds_must_be_ordered(db):
    integrity_error(
        lambda: Context.objects.create(slug="bad", pressure_percent=95, maintenance_percent=90)
    )
