"""Tokens a process found live are remembered for a minute (`recently_authenticated`), for
writes that check the token themselves; `submit_transaction(token_id=...)` is such a write,
alone or in a group commit."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from memory import contexts
from memory.contexts import (
    TOKEN_RECHECK_SECONDS,
    authenticate_token,
    create_context,
    issue_token,
    recently_authenticated,
    revoke_token,
)
from memory.errors import TokenNotLive
from memory.models import ApiToken, Context, TransactionRecord
from memory.tx.engine import submit_transaction

TX = '(context-tx (reason "note") (derive f-1 (note hello)))'


@pytest.fixture
def issued(db: Any) -> contexts.IssuedToken:
    return issue_token(create_context("tokens"), name="agent")


def test_a_token_is_remembered_only_after_it_was_found_live(issued: Any) -> None:
    assert recently_authenticated(issued.raw) is None
    assert authenticate_token(issued.raw) is not None
    first, second = recently_authenticated(issued.raw), recently_authenticated(issued.raw)
    assert first is not None and second is not None
    assert (first.pk, first.context.slug) == (issued.token.pk, "tokens")
    assert first is not second and first.context is not second.context


def test_revoking_in_this_process_forgets_it(issued: Any) -> None:
    authenticate_token(issued.raw)
    revoke_token(issued.token.pk)
    assert recently_authenticated(issued.raw) is None


def test_after_a_minute_the_database_is_asked_again(issued: Any, monkeypatch: Any) -> None:
    authenticate_token(issued.raw)
    now = contexts._clock()
    monkeypatch.setattr(contexts, "_clock", lambda: now + TOKEN_RECHECK_SECONDS)
    assert recently_authenticated(issued.raw) is None


def _revoke_elsewhere(issued: Any) -> None:
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())


def test_a_commit_with_a_revoked_token_writes_and_records_nothing(
    issued: Any, transactional_db: Any
) -> None:
    context = issued.token.context
    _revoke_elsewhere(issued)
    with pytest.raises(TokenNotLive):
        submit_transaction(context.pk, text=TX, token_id=issued.token.pk)  # a group of one
    with pytest.raises(TokenNotLive), transaction.atomic():
        submit_transaction(context.pk, text=TX, token_id=issued.token.pk)  # alone
    assert Context.objects.get(pk=context.pk).version == 0
    assert not TransactionRecord.objects.filter(context=context).exists()


def test_a_token_of_another_context_cannot_commit(issued: Any, transactional_db: Any) -> None:
    other = create_context("other")
    with pytest.raises(TokenNotLive):
        submit_transaction(other.pk, text=TX, token_id=issued.token.pk)
    assert submit_transaction(issued.token.context.pk, text=TX, token_id=issued.token.pk)
