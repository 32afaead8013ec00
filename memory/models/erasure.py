"""Erasure tombstones (R64): what was erased, where, when, by whom and why."""

from __future__ import annotations

from django.db import models

from memory.kinds import ERASURE_TARGETS
from memory.models.base import choices_of, value_in
from memory.models.contexts import Context


class Erasure(models.Model):
    """One erased item of a context, written by `memory.erasure.erase` only.

    `target` is `event` (a whole event, `ref` its `@e<seq>`), `frame` (every revision of
    the frame `ref`), `span` (characters `span_start`..`span_end` of the event `ref`) or
    `pattern` (every occurrence of a text in the context; the text itself is never kept,
    `label` says what it was without saying it). `matches` counts the places masked.
    `origin` is the slug of the context the erasure was asked on (another one of the
    lineage, or this one); `request` groups the tombstones of one request."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="erasures")
    request = models.CharField(max_length=32)
    target = models.CharField(max_length=10, choices=choices_of(ERASURE_TARGETS))
    ref = models.CharField(max_length=140, blank=True)
    span_start = models.BigIntegerField(null=True, blank=True)
    span_end = models.BigIntegerField(null=True, blank=True)
    label = models.CharField(max_length=200, blank=True)
    matches = models.BigIntegerField(default=0)
    reason = models.TextField()
    erased_by = models.CharField(max_length=200)
    erased_at = models.DateTimeField()
    origin = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["context", "id"]
        constraints = [
            models.CheckConstraint(
                condition=value_in("target", ERASURE_TARGETS), name="erasure_target_valid"
            ),
        ]
        indexes = [models.Index(fields=["context", "ref"], name="erasure_ref_idx")]

    def __str__(self) -> str:
        return f"{self.context_id}:{self.target}:{self.ref or self.label}"
