"""fork_context and freeze_context commands; lineage and actions in the admin."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from memory.contexts import authenticate_token
from memory.errors import ContextFrozen
from memory.models import Context, Frame
from tests.memory.conftest import Agent


def _run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_fork_command_prints_the_token_last(release_frame: Agent) -> None:
    release_frame.commit("(context-tx (revise release (goal ship-v2)))")
    lines = _run("fork_context", "release-team", "rt-old", "--at-version", "1")
    token = authenticate_token(lines[-1])
    assert token is not None and token.context.slug == "rt-old"
    fork = Context.objects.get(slug="rt-old")
    assert (fork.version, fork.forked_from_id, fork.forked_version) == (
        1,
        release_frame.context.pk,
        1,
    )
    assert Frame.objects.get(context=fork, frame_id="release").body == {
        "goal": "ship-v1",
        "stage": "waiting-for-tests",
    }
    with pytest.raises(CommandError):
        _run("fork_context", "release-team", "rt-bad", "--at-version", "9")
    with pytest.raises(CommandError):
        _run("fork_context", "nope")


def test_freeze_command_refuses_writes_until_unfrozen(release_frame: Agent) -> None:
    assert _run("freeze_context", "release-team") == ["release-team frozen"]
    assert _run("freeze_context", "release-team") == ["release-team was already frozen"]
    with pytest.raises(ContextFrozen):
        release_frame.observe("refused")
    with pytest.raises(ContextFrozen):
        release_frame.commit("(context-tx (derive x (a b)))")
    with pytest.raises(ContextFrozen):
        release_frame.evaluate()
    assert _run("freeze_context", "release-team", "--unfreeze") == ["release-team unfrozen"]
    assert _run("freeze_context", "release-team", "--unfreeze") == ["release-team was not frozen"]
    assert release_frame.observe("accepted") == "@e44"


def test_admin_shows_lineage_and_freezes(client: Any, release_frame: Agent) -> None:
    User.objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    _run("fork_context", "release-team", "child")
    _run("fork_context", "child", "grandchild")
    page = client.get(f"/admin/memory/context/{Context.objects.get(slug='grandchild').pk}/change/")
    assert b"release-team@v1 &lt;- child@v1" in page.content
    page = client.get(f"/admin/memory/context/{release_frame.context.pk}/change/")
    assert b"child@v1" in page.content
    response = client.post(
        "/admin/memory/context/",
        {"action": "freeze_action", "_selected_action": [release_frame.context.pk]},
    )
    assert response.status_code == 302
    assert Context.objects.get(slug="release-team").frozen is True
    client.post(
        "/admin/memory/context/",
        {"action": "fork_action", "_selected_action": [release_frame.context.pk]},
    )
    assert Context.objects.filter(forked_from=release_frame.context).count() == 2
