"""What Morphz stores. Rules live in the `memory` service modules; these classes only store.

Every write goes through one function per verb in `memory.tx.engine`, `memory.timeline.events`,
`memory.timeline.evaluation`, `memory.contexts` and `memory.search.indexer`; nothing else sets these fields.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q

from memory.fields import OrderedJSONField
from memory.kinds import (
    EVENT_KINDS,
    FRAME_STATUSES,
    REQUEST_STATES,
    RETIREMENT_OUTCOMES,
    TRANSACTION_STATUSES,
)
from memory.vocabulary import event_ref


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


def _in(field: str, values: tuple[str, ...]) -> Q:
    return Q(**{f"{field}__in": list(values)})


class Context(models.Model):
    """One agent's cognitive context (R1). Counters only move through `memory` functions."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    version = models.BigIntegerField(default=0)
    tick = models.BigIntegerField(default=0)
    last_seq = models.BigIntegerField(default=0)
    grace_ticks = models.PositiveIntegerField(default=8)
    capacity_tokens = models.PositiveIntegerField(default=32000)
    pressure_percent = models.PositiveSmallIntegerField(default=70)
    maintenance_percent = models.PositiveSmallIntegerField(default=90)
    maintenance_exit_percent = models.PositiveSmallIntegerField(default=80)
    # Per-item budget of one observation in the model input (R47); larger ones are previewed.
    observation_budget_tokens = models.PositiveIntegerField(default=2000)
    used_tokens = models.BigIntegerField(default=0)
    in_maintenance = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # A frozen context refuses every write with 409 context_frozen (R54).
    frozen = models.BooleanField(default=False)
    # Lineage of a fork (R53): the source context and the point it was copied at.
    forked_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    forked_version = models.BigIntegerField(null=True, blank=True)
    forked_tick = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=Q(version__gte=0), name="context_version_nonneg"),
            models.CheckConstraint(condition=Q(tick__gte=0), name="context_tick_nonneg"),
            models.CheckConstraint(condition=Q(last_seq__gte=0), name="context_seq_nonneg"),
            models.CheckConstraint(condition=Q(capacity_tokens__gt=0), name="context_capacity_pos"),
            models.CheckConstraint(condition=Q(used_tokens__gte=0), name="context_used_nonneg"),
            models.CheckConstraint(
                condition=Q(observation_budget_tokens__gte=200),
                name="context_observation_budget_min",
            ),
            models.CheckConstraint(
                condition=Q(pressure_percent__gt=0)
                & Q(pressure_percent__lte=models.F("maintenance_percent"))
                & Q(maintenance_exit_percent__lt=models.F("maintenance_percent"))
                & Q(maintenance_exit_percent__gt=0)
                & Q(maintenance_percent__lte=100),
                name="context_thresholds_ordered",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class ApiToken(models.Model):
    """A per-context bearer token (R38); only its SHA-256 is stored."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    key_prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["context", "created_at"]

    def __str__(self) -> str:
        return f"{self.context.slug}:{self.key_prefix}…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Evaluation(models.Model):
    """One model call: the inputs it claimed and the view it compiled (R21–R23)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="evaluations")
    thread = models.CharField(max_length=100, default="main")
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
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
            models.UniqueConstraint(
                fields=["context", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="evaluation_idempotency_unique",
            ),
        ]


class Event(models.Model):
    """An immutable record of the context's history (R2). Only `active`, `pending`,
    request state and retirement bookkeeping change after the write."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="events")
    seq = models.BigIntegerField()
    kind = models.CharField(max_length=20, choices=_choices(EVENT_KINDS))
    thread = models.CharField(max_length=100, default="main")
    content = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
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
        max_length=10, null=True, blank=True, choices=_choices(REQUEST_STATES)
    )
    delivered_by_seq = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["context", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["context", "seq"], name="event_seq_unique"),
            models.UniqueConstraint(
                fields=["context", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="event_idempotency_unique",
            ),
            models.CheckConstraint(condition=Q(seq__gt=0), name="event_seq_positive"),
            models.CheckConstraint(condition=_in("kind", EVENT_KINDS), name="event_kind_valid"),
            models.CheckConstraint(
                condition=Q(request_state__isnull=True) | _in("request_state", REQUEST_STATES),
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
        return event_ref(self.seq)


class TransactionRecord(models.Model):
    """Every submitted context transaction, committed or rejected (R6)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="transactions")
    author = models.CharField(max_length=200)
    author_kind = models.CharField(max_length=10)
    thread = models.CharField(max_length=100, default="main")
    base_version = models.BigIntegerField(null=True, blank=True)
    committed_version = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=_choices(TRANSACTION_STATUSES))
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
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
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
            models.UniqueConstraint(
                fields=["context", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False) & Q(status="committed"),
                name="transaction_idempotency_unique",
            ),
            models.CheckConstraint(
                condition=_in("status", TRANSACTION_STATUSES), name="transaction_status_valid"
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


class Frame(models.Model):
    """A unit of model-written understanding with a stable id (R4)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="frames")
    frame_id = models.CharField(max_length=128)
    revision = models.PositiveIntegerField(default=1)
    body = OrderedJSONField()
    sources = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=_choices(FRAME_STATUSES), default="active")
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
                condition=_in("status", FRAME_STATUSES), name="frame_status_valid"
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
                condition=Q(removed_version__isnull=True),
                name="relation_live_unique",
            ),
        ]
        indexes = [
            models.Index(
                fields=["subject", "name"],
                condition=Q(removed_version__isnull=True),
                name="relation_subject_idx",
            ),
            models.Index(
                fields=["object", "name"],
                condition=Q(removed_version__isnull=True),
                name="relation_object_idx",
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
        max_length=12, choices=_choices(RETIREMENT_OUTCOMES), default="pending"
    )
    resolved_tick = models.BigIntegerField(null=True, blank=True)
    resolved_version = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["frame", "generation"]
        constraints = [
            models.UniqueConstraint(fields=["frame", "generation"], name="retirement_gen_unique"),
            models.CheckConstraint(
                condition=_in("outcome", RETIREMENT_OUTCOMES), name="retirement_outcome_valid"
            ),
        ]


class IndexIntent(models.Model):
    """Outbox row: this frame or event must be (re)indexed for search (R34)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    frame = models.ForeignKey(Frame, null=True, blank=True, on_delete=models.CASCADE)
    event = models.ForeignKey(Event, null=True, blank=True, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(frame__isnull=True) ^ Q(event__isnull=True),
                name="index_intent_one_target",
            ),
        ]


class SearchDocument(models.Model):
    """Derived search index entry for one frame or event; rebuildable from the facts.

    No copy of the text: snippets are cut from the facts for the few hits a search returns
    (storing it doubled what indexing wrote). No separate index on `context`: the
    (context, created_at) index serves it, and a plain context index tempted the planner
    into filtering a whole context instead of using the GIN index."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+", db_index=False)
    frame = models.OneToOneField(
        Frame, null=True, blank=True, on_delete=models.CASCADE, related_name="search_document"
    )
    event = models.OneToOneField(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="search_document"
    )
    ref = models.CharField(max_length=140)
    status = models.CharField(max_length=10)
    kind = models.CharField(max_length=20)
    thread = models.CharField(max_length=100)
    created_at = models.DateTimeField()
    tokens = SearchVectorField()
    length = models.PositiveIntegerField(default=0)  # words: BM25's document length
    indexed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(frame__isnull=True) ^ Q(event__isnull=True),
                name="search_document_one_target",
            ),
        ]
        indexes = [
            GinIndex(fields=["tokens"], name="search_tokens_gin"),
            models.Index(fields=["context", "created_at"], name="search_context_time_idx"),
        ]


class FrameChange(models.Model):
    """One state a frame had: written by a database trigger on every insert or update of a
    frame that changes its status, protection, revision or retirement window (R52).

    `version` is the frame's `changed_version` at that moment: a commit's version, or for an
    expiry the version the context had when the evaluation applied it. Bodies are in
    `FrameRevision` (by `revision`)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    frame = models.ForeignKey(Frame, on_delete=models.CASCADE, related_name="changes")
    version = models.BigIntegerField()
    revision = models.PositiveIntegerField()
    status = models.CharField(max_length=10)
    protected = models.BooleanField()
    retire_requested_tick = models.BigIntegerField(null=True, blank=True)
    retire_due_tick = models.BigIntegerField(null=True, blank=True)
    retire_reason = models.TextField(null=True, blank=True)
    retire_generation = models.PositiveIntegerField()
    token_estimate = models.BigIntegerField()

    class Meta:
        ordering = ["frame", "id"]
        indexes = [
            models.Index(fields=["frame", "version", "id"], name="framechange_asof_idx"),
            models.Index(fields=["context", "version"], name="framechange_ctx_idx"),
        ]


class EventChange(models.Model):
    """An observation's activity flag changed (retire or restore): written by a database
    trigger; `version` is the event's `status_version` (the committing version)."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="changes")
    seq = models.BigIntegerField()
    version = models.BigIntegerField()
    active = models.BooleanField()

    class Meta:
        ordering = ["event", "id"]
        indexes = [
            models.Index(fields=["event", "version", "id"], name="eventchange_asof_idx"),
            models.Index(fields=["context", "version"], name="eventchange_ctx_idx"),
        ]


class MaintenanceChange(models.Model):
    """The context entered or left maintenance (a database trigger): maintenance has
    hysteresis, so the flag at a past point cannot be computed from usage alone."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    version = models.BigIntegerField()
    last_seq = models.BigIntegerField()
    in_maintenance = models.BooleanField()

    class Meta:
        ordering = ["context", "id"]
        indexes = [models.Index(fields=["context", "last_seq"], name="maintchange_idx")]
