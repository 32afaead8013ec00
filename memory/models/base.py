"""Helpers the model modules share: closed value sets as choices and as check constraints,
and the idempotency key column with its rule."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from memory.idempotency import KEY_MAX


def choices_of(values: tuple[str, ...]) -> list[tuple[str, str]]:
    """Django `choices` for a closed set of strings (memory.kinds)."""
    return [(v, v) for v in values]


def value_in(field: str, values: tuple[str, ...]) -> Q:
    """The check constraint condition `field IN values`."""
    return Q(**{f"{field}__in": list(values)})


def idempotency_key_field() -> models.CharField[str | None, str | None]:
    """The optional `idempotency_key` column of a write a retry may repeat (R49)."""
    return models.CharField(max_length=KEY_MAX, null=True, blank=True)


def key_once(name: str, *, when: Q | None = None) -> models.UniqueConstraint:
    """A key names one write of its context: (context, idempotency_key) unique where a key was
    given (and `when` holds: a rejected transaction does not hold its key)."""
    condition = Q(idempotency_key__isnull=False)
    if when is not None:
        condition &= when
    return models.UniqueConstraint(
        fields=["context", "idempotency_key"], condition=condition, name=name
    )
