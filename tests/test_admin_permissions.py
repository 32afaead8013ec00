"""Admin actions check model permissions, not only the staff flag (R65): a staff account
without the permission an action needs cannot run it; with it, it can. Revoking tokens and
erasing ask for a confirmation first."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from memory.contexts import create_context, issue_token
from memory.models import ApiToken, Context, Erasure, Event
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction

CONTEXTS = "/admin/memory/context/"
TOKENS = "/admin/memory/apitoken/"
EVENTS = "/admin/memory/event/"
FRAMES = "/admin/memory/frame/"


@pytest.fixture
def ops(db: Any) -> Context:
    context = create_context("ops")
    append_event(context.pk, kind="user_message", content="my secret is swordfish-4410")
    submit_transaction(context.pk, text='(context-tx (derive pw (from @e1) (is "swordfish-4410")))')
    issue_token(context, name="bot")
    return context


def _staff(*perms: str) -> Client:
    user = User.objects.create_user(f"staff{len(perms)}", password="pw", is_staff=True)
    for perm in perms:
        app, code = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app, codename=code)
        )
    client = Client()
    client.force_login(user)
    return client


def _act(client: Client, url: str, action: str, pks: list[int], **extra: str) -> Any:
    return client.post(url, {"action": action, "_selected_action": pks, **extra})


VIEW = ("memory.view_context", "memory.view_apitoken", "memory.view_event", "memory.view_frame")


def test_revoking_takes_the_permission_and_a_confirmation(ops: Context) -> None:
    token = ApiToken.objects.get(context=ops, name="bot")
    _act(_staff(*VIEW), TOKENS, "revoke_action", [token.pk], post="yes")
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    allowed = _staff(*VIEW, "memory.change_apitoken")
    page = _act(allowed, TOKENS, "revoke_action", [token.pk])
    assert page.status_code == 200 and b"Revoke tokens?" in page.content
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None  # asked, not done
    _act(allowed, TOKENS, "revoke_action", [token.pk], post="yes")
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None


@pytest.mark.parametrize(
    ("action", "perm", "done"),
    [
        ("freeze_action", "memory.change_context", lambda c: Context.objects.get(pk=c.pk).frozen),
        (
            "fork_action",
            "memory.add_context",
            lambda c: Context.objects.filter(forked_from=c).exists(),
        ),
        (
            "issue_admin_token_action",
            "memory.add_apitoken",
            lambda c: ApiToken.objects.filter(context=c, scope="admin").exists(),
        ),
        (
            "issue_token_action",
            "memory.add_apitoken",
            lambda c: ApiToken.objects.filter(context=c).count() == 2,
        ),
    ],
)
def test_context_actions_take_their_permission(
    ops: Context, action: str, perm: str, done: Any
) -> None:
    _act(_staff(*VIEW), CONTEXTS, action, [ops.pk])
    assert not done(ops)
    _act(_staff(*VIEW, perm), CONTEXTS, action, [ops.pk])
    assert done(ops)


def test_unfreezing_takes_the_permission(ops: Context) -> None:
    from memory.contexts import set_frozen

    set_frozen(ops.pk, True)
    _act(_staff(*VIEW), CONTEXTS, "unfreeze_action", [ops.pk])
    assert Context.objects.get(pk=ops.pk).frozen
    _act(_staff(*VIEW, "memory.change_context"), CONTEXTS, "unfreeze_action", [ops.pk])
    assert not Context.objects.get(pk=ops.pk).frozen


@pytest.mark.parametrize(("url", "model"), [(EVENTS, "event"), (FRAMES, "frame")])
def test_erasing_takes_the_permission_a_confirmation_and_a_reason(
    ops: Context, url: str, model: str
) -> None:
    from memory.models import Frame

    pk = (
        Event.objects.get(context=ops, seq=1).pk
        if model == "event"
        else Frame.objects.get(context=ops).pk
    )
    _act(_staff(*VIEW), url, "erase_action", [pk], post="yes", reason="asked")
    assert not Erasure.objects.exists()
    allowed = _staff(*VIEW, "memory.add_erasure")
    page = _act(allowed, url, "erase_action", [pk])
    assert page.status_code == 200 and b"cannot be undone" in page.content
    assert not Erasure.objects.exists()
    _act(allowed, url, "erase_action", [pk], post="yes", reason="GDPR 17")
    stone = Erasure.objects.get(context=ops)
    assert stone.reason == "GDPR 17" and stone.erased_by.startswith("person:")
    assert "swordfish-4410" not in Event.objects.get(context=ops, seq=1).content
