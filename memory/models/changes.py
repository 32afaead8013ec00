"""The change log of statuses, read by as-of reads and replay."""

from __future__ import annotations

from django.db import models

from memory.models.cognitive import Frame
from memory.models.contexts import Context
from memory.models.timeline import Event


def change_log_indexes(owner: str, prefix: str) -> list[models.Index]:
    """How a change log is read: one owner's state as of a version (its newest change at or
    before it), and a context's changes between two versions (replay, diff)."""
    return [
        models.Index(fields=[owner, "version", "id"], name=f"{prefix}_asof_idx"),
        models.Index(fields=["context", "version"], name=f"{prefix}_ctx_idx"),
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
        indexes = change_log_indexes("frame", "framechange")


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
        indexes = change_log_indexes("event", "eventchange")


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


class SettingsChange(models.Model):
    """The settings a context was created with (`kind` "created") and every later change
    ("changed"), written by `memory.contexts` (R51, R52): replay and as-of reads apply the
    settings in force at each point. `settings` holds all of them; `version`, `last_seq`
    and `evaluations` (how many evaluations the context had) place the change in the
    history."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10)
    version = models.BigIntegerField()
    last_seq = models.BigIntegerField()
    evaluations = models.BigIntegerField()
    settings = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["context", "id"]
        indexes = [models.Index(fields=["context", "version", "id"], name="settingschange_idx")]
