"""create_context / create_token print tokens that authenticate; only hashes are stored (R38, R44)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from memory.contexts import authenticate_token, revoke_token
from memory.models import ApiToken, Context


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_context_prints_a_token_that_authenticates(db):
    output = run(
        "create_context", "ops", "--name", "Ops", "--grace-ticks", "4", "--capacity-tokens", "5000"
    )
    raw = output.strip().splitlines()[-1]
    token = authenticate_token(raw)
    assert token is not None and token.context.slug == "ops"
    context = Context.objects.get(slug="ops")
    assert (context.name, context.grace_ticks, context.capacity_tokens) == ("Ops", 4, 5000)


def test_stored_form_is_not_the_token(db):
    raw = run("create_context", "ops").strip().splitlines()[-1]
    stored = ApiToken.objects.get()
    assert raw not in (stored.key_hash, stored.key_prefix)
    assert len(stored.key_hash) == 64


def test_create_token_prints_another_token(db):
    first = run("create_context", "ops").strip().splitlines()[-1]
    second = run("create_token", "ops").strip().splitlines()[-1]
    assert first != second
    assert authenticate_token(second).context.slug == "ops"


def test_revoked_token_no_longer_authenticates(db):
    raw = run("create_context", "ops").strip().splitlines()[-1]
    revoke_token(ApiToken.objects.get().pk)
    assert authenticate_token(raw) is None


def test_create_token_for_unknown_context_fails(db):
    with pytest.raises(CommandError, match="no context"):
        run("create_token", "nope")


def test_duplicate_context_is_refused(db):
    run("create_context", "ops")
    with pytest.raises(CommandError, match="already exists"):
        run("create_context", "ops")


def test_create_token_takes_a_scope_and_an_expiry(db: Any) -> None:
    from io import StringIO

    from django.core.management import call_command

    from memory.contexts import authenticate_token, create_context

    create_context("scoped")
    out = StringIO()
    call_command("create_token", "scoped", "--scope", "read", "--expires-in-days", "2", stdout=out)
    token = authenticate_token(out.getvalue().strip().splitlines()[-1])
    assert token is not None and token.scope == "read" and token.expires_at is not None
    assert "new read API token" in out.getvalue()


@pytest.mark.parametrize("days", ["1e7", "1e12", "inf", "nan", "0"])
def test_create_token_refuses_an_expiry_that_cannot_be_stored(db: Any, days: str) -> None:
    from memory.contexts import create_context

    create_context("far")
    with pytest.raises(CommandError, match="--expires-in-days"):
        run("create_token", "far", "--expires-in-days", days)
    assert not ApiToken.objects.filter(context__slug="far").exists()
