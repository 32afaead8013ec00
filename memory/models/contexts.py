"""Contexts and their API tokens."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

from memory.kinds import AGENT_SCOPE, SCREENING_MODES, SCREENING_OFF, TOKEN_SCOPES
from memory.models.base import choices_of, value_in
from memory.vocabulary import SLUG_MAX


class Context(models.Model):
    """One agent's cognitive context (R1). Counters only move through `memory` functions."""

    slug = models.SlugField(max_length=SLUG_MAX, unique=True)
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
    # Screening of written text for secrets and card numbers (memory.screening): off,
    # refuse (a stable error naming the field) or mask (stored masked, with a note).
    screening = models.CharField(
        max_length=10, choices=choices_of(SCREENING_MODES), default=SCREENING_OFF
    )
    # Imported from an export whose signature did not verify (memory.versions.signing),
    # by an admin who said so explicitly: every view of its history says so.
    unverified_import = models.BooleanField(default=False)
    # A context an import or a replay builds before it is checked (memory.versions.replay):
    # never listed; one whose builder died is removed at the next start.
    scratch = models.BooleanField(default=False)

    class Meta:
        ordering = ["slug"]
        constraints = [
            # `Demo` and `demo` would be two contexts no one can tell apart in a list.
            models.UniqueConstraint(
                Lower("slug"),
                name="context_slug_unique_any_case",
                violation_error_message="A context with this slug already exists, whatever its case.",
            ),
            models.CheckConstraint(condition=Q(version__gte=0), name="context_version_nonneg"),
            models.CheckConstraint(
                condition=value_in("screening", SCREENING_MODES), name="context_screening_valid"
            ),
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
    """A per-context bearer token (R38); only its SHA-256 is stored. Its `scope` says what
    it may do (R65, `memory.scopes`); past `expires_at` it is refused like a revoked one."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    key_prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=10, choices=choices_of(TOKEN_SCOPES), default=AGENT_SCOPE)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["context", "created_at"]
        constraints = [
            models.CheckConstraint(
                condition=value_in("scope", TOKEN_SCOPES), name="token_scope_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.context.slug}:{self.key_prefix}…"

    @property
    def is_active(self) -> bool:
        """Whether the token still works (not revoked, not expired)."""
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return False
        return self.revoked_at is None


class ForkReceipt(models.Model):
    """A fork made under an idempotency key (memory.versions.forks): a retry with the same
    key gets the same fork and its token. The token is kept only sealed with a key derived
    from the caller's own credential (never stored), so this row alone does not reveal it."""

    source = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    fork = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    request = models.JSONField()
    sealed_token = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "key"], name="fork_receipt_key_once")
        ]
