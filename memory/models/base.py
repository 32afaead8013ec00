"""Helpers the model modules share: closed value sets as choices and as check constraints."""

from __future__ import annotations

from django.db.models import Q


def choices_of(values: tuple[str, ...]) -> list[tuple[str, str]]:
    """Django `choices` for a closed set of strings (memory.kinds)."""
    return [(v, v) for v in values]


def value_in(field: str, values: tuple[str, ...]) -> Q:
    """The check constraint condition `field IN values`."""
    return Q(**{f"{field}__in": list(values)})
