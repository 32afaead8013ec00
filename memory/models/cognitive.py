"""The cognitive state: frames, their revisions, relations and retirement requests."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q

from memory.fields import OrderedJSONField
from memory.kinds import (
    FRAME_STATUSES,
    RETIREMENT_OUTCOMES,
)
from memory.models.base import choices_of, value_in
from memory.models.contexts import Context
from memory.models.timeline import TransactionRecord

# A relation is live until a commit removes it: the unique key and both lookups cover only
# live ones.
LIVE_RELATION = Q(removed_version__isnull=True)


class Frame(models.Model):
    """A unit of model-written understanding with a stable id (R4)."""

    # No index of its own: `frame_id_unique` starts with the context. A second, narrower
    # index on the context alone looked cheaper to the planner whenever its statistics were
    # behind, and a lookup by frame id then read the whole context for each name.
    context = models.ForeignKey(
        Context, on_delete=models.CASCADE, related_name="frames", db_index=False
    )
    frame_id = models.CharField(max_length=128)
    revision = models.PositiveIntegerField(default=1)
    body = OrderedJSONField()
    sources = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=choices_of(FRAME_STATUSES), default="active")
    protected = models.BooleanField(default=False)
    retire_requested_tick = models.BigIntegerField(null=True, blank=True)
    retire_due_tick = models.BigIntegerField(null=True, blank=True)
    retire_reason = models.TextField(null=True, blank=True)
    retire_generation = models.PositiveIntegerField(default=0)
    token_estimate = models.BigIntegerField(default=0)
    created_version = models.BigIntegerField()
    changed_version = models.BigIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["context", "frame_id"]
        constraints = [
            models.UniqueConstraint(fields=["context", "frame_id"], name="frame_id_unique"),
            models.CheckConstraint(
                condition=value_in("status", FRAME_STATUSES), name="frame_status_valid"
            ),
            models.CheckConstraint(condition=Q(revision__gte=1), name="frame_revision_positive"),
            models.CheckConstraint(
                condition=(Q(status="retiring") & Q(retire_due_tick__isnull=False))
                | (~Q(status="retiring") & Q(retire_due_tick__isnull=True)),
                name="frame_retiring_has_due_tick",
            ),
            models.CheckConstraint(
                condition=~(Q(status="retiring") & Q(protected=True)),
                name="frame_protected_not_retiring",
            ),
        ]
        indexes = [
            models.Index(
                fields=["context", "retire_due_tick"],
                condition=Q(status="retiring"),
                name="frame_retiring_due_idx",
            ),
            models.Index(
                fields=["context", "frame_id"],
                condition=~Q(status="retired"),
                name="frame_live_idx",
            ),
            GinIndex(fields=["sources"], name="frame_sources_gin"),
        ]

    def __str__(self) -> str:
        return self.frame_id


class FrameRevision(models.Model):
    """Every body a frame ever had, with the transaction that wrote it (R4, R32)."""

    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    body = OrderedJSONField()
    sources = models.JSONField(default=list)
    transaction = models.ForeignKey(
        TransactionRecord, on_delete=models.RESTRICT, related_name="frame_revisions"
    )
    version = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["frame", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "revision"], name="frame_revision_unique"),
        ]


class Relation(models.Model):
    """A named directed edge between two frames (R5); unrelate keeps the row as history."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="relations")
    subject = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="relations_out")
    name = models.CharField(max_length=64)
    object = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="relations_in")
    created_version = models.BigIntegerField()
    removed_version = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["context", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "name", "object"],
                condition=LIVE_RELATION,
                name="relation_live_unique",
            ),
        ]
        indexes = [
            models.Index(
                fields=["subject", "name"], condition=LIVE_RELATION, name="relation_subject_idx"
            ),
            models.Index(
                fields=["object", "name"], condition=LIVE_RELATION, name="relation_object_idx"
            ),
        ]


class RetirementRequest(models.Model):
    """One request to retire a frame and how it ended (R14–R17)."""

    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="retirements")
    generation = models.PositiveIntegerField()
    requested_tick = models.BigIntegerField()
    due_tick = models.BigIntegerField()
    reason = models.TextField(blank=True)
    requested_version = models.BigIntegerField()
    outcome = models.CharField(
        max_length=12, choices=choices_of(RETIREMENT_OUTCOMES), default="pending"
    )
    resolved_tick = models.BigIntegerField(null=True, blank=True)
    resolved_version = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["frame", "generation"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "generation"], name="retirement_gen_unique"),
            models.CheckConstraint(
                condition=value_in("outcome", RETIREMENT_OUTCOMES), name="retirement_outcome_valid"
            ),
        ]
