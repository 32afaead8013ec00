"""An explorer websocket is closed when its person's access ends (staff flag
removed, session deleted); no live update reaches them after that.

The real consumer behind Channels' auth stack, driven by Channels' own test communicator
with the person's real session cookie (no browser needed)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from explorer.routing import websocket_urlpatterns
from memory.contexts import create_context
from memory.tx.engine import submit_transaction


@pytest.fixture
def reviewer(transactional_db: Any, settings: Any) -> dict[str, Any]:
    settings.MORPHZ_WS_RECHECK_SECONDS = 0.2
    context = create_context("watched")
    user = get_user_model().objects.create_user("rev", password="pw", is_staff=True)
    client = Client()
    client.force_login(user)
    return {"context": context, "user": user, "cookie": client.cookies["sessionid"].value}


def in_own_loop(coroutine: Any) -> Any:
    """Run `coroutine` on a fresh event loop in its own thread (the browser tests leave
    Playwright's loop running in this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class Socket(ApplicationCommunicator):  # type: ignore[misc]
    """A websocket client speaking ASGI to the app (channels.testing needs daphne)."""

    async def connect(self) -> tuple[bool, Any]:
        await self.send_input({"type": "websocket.connect"})
        answer = await self.receive_output(5)
        return answer["type"] == "websocket.accept", answer

    async def receive_json_from(self, timeout: float) -> Any:
        message = await self.receive_output(timeout)
        assert message["type"] == "websocket.send", message
        return json.loads(message["text"])

    async def disconnect(self) -> None:
        await self.send_input({"type": "websocket.disconnect", "code": 1000})
        await self.wait(5)


def _communicator(cookie: str) -> Socket:
    app = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    scope = {
        "type": "websocket",
        "path": "/ws/contexts/watched/",
        "query_string": b"",
        "headers": [(b"cookie", f"sessionid={cookie}".encode())],
        "subprotocols": [],
    }
    return Socket(app, scope)


def _commit(context_pk: int, frame: str) -> None:
    submit_transaction(context_pk, text=f"(context-tx (derive {frame} (n 1)))")


async def _scenario(reviewer: dict[str, Any], revoke: Any) -> list[Any]:
    """Connect, receive one update, revoke, commit again: what arrives after revocation."""
    ws = _communicator(reviewer["cookie"])
    connected, _ = await ws.connect()
    assert connected
    pk = reviewer["context"].pk
    await database_sync_to_async(_commit)(pk, "before")
    first = await ws.receive_json_from(timeout=5)
    assert first["type"] == "transaction"
    await database_sync_to_async(revoke)(reviewer)
    await database_sync_to_async(_commit)(pk, "after")
    received: list[Any] = []
    try:
        while True:
            message = await ws.receive_output(timeout=3)
            received.append(message)
            if message["type"] == "websocket.close":
                break
    except TimeoutError:
        pass
    await ws.disconnect()
    return received


def _unstaff(reviewer: dict[str, Any]) -> None:
    get_user_model().objects.filter(pk=reviewer["user"].pk).update(is_staff=False)


def _delete_session(reviewer: dict[str, Any]) -> None:
    Session.objects.filter(session_key=reviewer["cookie"]).delete()


@pytest.mark.parametrize("revoke", [_unstaff, _delete_session], ids=["unstaffed", "logged-out"])
def test_a_revoked_person_gets_nothing_more_and_the_socket_closes(
    reviewer: dict[str, Any], revoke: Any
) -> None:
    received = in_own_loop(_scenario(reviewer, revoke))
    assert [m["type"] for m in received] == ["websocket.close"], received
    assert received[-1]["code"] == 4403


async def _quiet(reviewer: dict[str, Any]) -> dict[str, Any]:
    ws = _communicator(reviewer["cookie"])
    connected, _ = await ws.connect()
    assert connected
    await database_sync_to_async(_delete_session)(reviewer)
    message: dict[str, Any] = await ws.receive_output(timeout=5)
    await ws.disconnect()
    return message


def test_a_quiet_socket_is_closed_too(reviewer: dict[str, Any]) -> None:
    message = in_own_loop(_quiet(reviewer))
    assert message == {"type": "websocket.close", "code": 4403}


async def _still_staff(reviewer: dict[str, Any]) -> Any:
    ws = _communicator(reviewer["cookie"])
    connected, _ = await ws.connect()
    assert connected
    await asyncio.sleep(0.6)  # several re-checks pass
    await database_sync_to_async(_commit)(reviewer["context"].pk, "still")
    message = await ws.receive_json_from(timeout=5)
    await ws.disconnect()
    return message


def test_a_person_who_keeps_access_keeps_the_stream(reviewer: dict[str, Any]) -> None:
    assert in_own_loop(_still_staff(reviewer))["frames"] == ["still"]
