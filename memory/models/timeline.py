"""The history: evaluations, events and the transactions that were submitted."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q

from memory.fields import OrderedJSONField
from memory.kinds import (
    EVENT_KINDS,
    REQUEST_STATES,
    TRANSACTION_STATUSES,
)
from memory.models.base import choices_of, idempotency_key_field, key_once, value_in
from memory.models.contexts import Context
from memory.vocabulary import event_ref


class Evaluation(models.Model):
    """One model call: the inputs it claimed and the view it compiled (R21–R23)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="evaluations")
    thread = models.CharField(max_length=100, default="main")
    idempotency_key = idempotency_key_field()
    continuation = models.BooleanField(default=False)
    tick = models.BigIntegerField()
    advanced_tick = models.BooleanField(default=False)
    view_version = models.BigIntegerField()
    claimed_seqs = ArrayField(models.BigIntegerField(), default=list)
    # The context's last event seq when it ran: its place in the history, for replay (R51).
    last_seq = models.BigIntegerField(null=True, blank=True)
    result = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["context", "id"]
        constraints = [
            key_once("evaluation_idempotency_unique"),
        ]


class Event(models.Model):
    """An immutable record of the context's history (R2). Only `active`, `pending`,
    request state and retirement bookkeeping change after the write."""

    # No index of its own: `event_seq_unique` starts with the context (see `Frame.context`).
    context = models.ForeignKey(
        Context, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=20, choices=choices_of(EVENT_KINDS))
    thread = models.CharField(max_length=100, default="main")
    content = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    idempotency_key = idempotency_key_field()
    size_chars = models.BigIntegerField(default=0)
    token_estimate = models.BigIntegerField(default=0)
    is_observation = models.BooleanField(default=False)
    active = models.BooleanField(default=False)
    status_version = models.BigIntegerField(default=0)
    pending = models.BooleanField(default=False)
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="claimed"
    )
    delivers = ArrayField(models.BigIntegerField(), default=list, blank=True)
    request_state = models.CharField(
        max_length=10, null=True, blank=True, choices=choices_of(REQUEST_STATES)
    )
    delivered_by_seq = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["context", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["context", "seq"], name="event_seq_unique"),
            key_once("event_idempotency_unique"),
            models.CheckConstraint(condition=Q(seq__gt=0), name="event_seq_positive"),
            models.CheckConstraint(
                condition=value_in("kind", EVENT_KINDS), name="event_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(request_state__isnull=True) | value_in("request_state", REQUEST_STATES),
                name="event_request_state_valid",
            ),
            models.CheckConstraint(
                condition=Q(active=False) | Q(is_observation=True),
                name="event_only_observations_active",
            ),
        ]
        indexes = [
            models.Index(
                fields=["context", "seq"], condition=Q(pending=True), name="event_pending_idx"
            ),
            models.Index(
                fields=["context", "seq"], condition=Q(active=True), name="event_active_idx"
            ),
            models.Index(
                fields=["context", "seq"],
                condition=Q(request_state="open"),
                name="event_open_request_idx",
            ),
            models.Index(fields=["context", "kind", "seq"], name="event_kind_idx"),
            models.Index(fields=["context", "thread", "seq"], name="event_thread_idx"),
        ]

    def __str__(self) -> str:
        return event_ref(self.seq)

    @property
    def ref(self) -> str:
        """The event's reference, `@e<seq>`."""
        return event_ref(self.seq)


class TransactionRecord(models.Model):
    """Every submitted context transaction, committed or rejected (R6)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="transactions")
    author = models.CharField(max_length=200)
    author_kind = models.CharField(max_length=10)
    thread = models.CharField(max_length=100, default="main")
    base_version = models.BigIntegerField(null=True, blank=True)
    committed_version = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=choices_of(TRANSACTION_STATUSES))
    reason = models.TextField(blank=True)
    text = models.TextField()
    ops = OrderedJSONField(null=True, blank=True)
    receipt = models.JSONField(null=True, blank=True)
    errors = models.JSONField(null=True, blank=True)
    frame_ids = ArrayField(models.CharField(max_length=128), default=list, blank=True)
    event = models.OneToOneField(
        Event, null=True, blank=True, on_delete=models.RESTRICT, related_name="transaction"
    )
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="transactions"
    )
    # A retry with the same key returns this commit's receipt (R49); `request_hash` tells a
    # retry (same request) from a reuse of the key for another request.
    idempotency_key = idempotency_key_field()
    request_hash = models.CharField(max_length=64, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["context", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["context", "committed_version"],
                condition=Q(committed_version__isnull=False),
                name="transaction_version_unique",
            ),
            key_once("transaction_idempotency_unique", when=Q(status="committed")),
            models.CheckConstraint(
                condition=value_in("status", TRANSACTION_STATUSES), name="transaction_status_valid"
            ),
            models.CheckConstraint(
                condition=(Q(status="committed") & Q(committed_version__isnull=False))
                | (Q(status="rejected") & Q(committed_version__isnull=True)),
                name="transaction_committed_has_version",
            ),
        ]
        indexes = [
            GinIndex(fields=["frame_ids"], name="transaction_frames_gin"),
        ]
