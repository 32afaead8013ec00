"""Tokens may expire (R65): past its expiry a token is refused like a revoked one, also
by the check a write makes itself and by the per-process memory of checked tokens."""

from __future__ import annotations

import datetime as dt
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memory.contexts import (
    authenticate_token,
    create_context,
    issue_token,
    recently_authenticated,
    token_is_live,
)
from memory.errors import InvalidField, InvalidRequest


def test_an_expired_token_is_refused_everywhere(db: Any) -> None:
    context = create_context("expiring")
    issued = issue_token(context, expires_at=timezone.now() + timedelta(seconds=0.5))
    assert authenticate_token(issued.raw) is not None
    assert recently_authenticated(issued.raw) is not None
    time.sleep(0.6)
    assert recently_authenticated(issued.raw) is None  # the remembered row has expired
    assert authenticate_token(issued.raw) is None
    assert not token_is_live(issued.token.pk, context.pk)


def test_a_token_cannot_be_issued_expired_or_with_an_unknown_scope(db: Any) -> None:
    context = create_context("bad-tokens")
    with pytest.raises(InvalidRequest):
        issue_token(context, expires_at=timezone.now() - timedelta(days=1))
    with pytest.raises(InvalidRequest):
        issue_token(context, scope="root")


def test_an_expiry_is_held_in_utc_and_one_that_cannot_be_stored_is_refused(db: Any) -> None:
    # +20:00 is past PostgreSQL's offsets (±15:59): the expiry is the instant it names.
    context = create_context("far-offsets")
    east = dt.timezone(dt.timedelta(hours=20))
    issued = issue_token(context, expires_at=dt.datetime(2100, 1, 1, 20, tzinfo=east))
    assert issued.token.expires_at == dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
    west = dt.timezone(-dt.timedelta(hours=23, minutes=59))
    with pytest.raises(InvalidField) as caught:
        issue_token(context, expires_at=dt.datetime.max.replace(tzinfo=west))
    assert [d["field"] for d in caught.value.details] == ["expires_at"]
