"""Read access that views and consumers share (they never query models for writes)."""

from __future__ import annotations

from typing import Any

from memory.models import Context


def person_can_see_all(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def contexts_for_person(user: Any) -> list[Context]:
    if not person_can_see_all(user):
        return []
    return list(Context.objects.order_by("slug"))


def context_for_person(slug: str, user: Any) -> Context | None:
    if not person_can_see_all(user):
        return None
    return Context.objects.filter(slug=slug).first()
