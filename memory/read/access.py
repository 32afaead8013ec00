"""Read access that views and consumers share (they never query models for writes)."""

from __future__ import annotations

from typing import Any

from memory.models import Context


def person_can_see_all(user: Any) -> bool:
    """Whether a signed-in person may see every context: active staff only."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def contexts_for_person(user: Any) -> list[Context]:
    """The contexts a person may open in the explorer, by slug (none unless staff)."""
    if not person_can_see_all(user):
        return []
    return list(Context.objects.filter(scratch=False).order_by("slug"))


def context_for_person(slug: str, user: Any) -> Context | None:
    """The context `slug` when the person may see it, else None."""
    if not person_can_see_all(user):
        return None
    return Context.objects.filter(slug=slug, scratch=False).first()


def person_still_allowed(session_key: str | None, user_pk: Any, slug: str) -> bool:
    """Whether the person behind an open explorer socket may still see context `slug`: their
    session still exists and is theirs, and they are still active staff."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.utils.crypto import constant_time_compare

    if not session_key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    data = store.load()
    if str(data.get(SESSION_KEY)) != str(user_pk):
        return False
    user = get_user_model().objects.filter(pk=user_pk).first()
    if user is None:
        return False
    session_hash = data.get(HASH_SESSION_KEY)
    if not session_hash or not constant_time_compare(session_hash, user.get_session_auth_hash()):
        return False
    return context_for_person(slug, user) is not None
