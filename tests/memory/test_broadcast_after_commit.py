"""Live updates leave only after the database commit, on the configured layer
(in memory by default; Redis when CHANNEL_LAYER_URL is set, as in CI's second pass).

Each test body runs on a worker thread, as sync views do under the server: the main thread
of a test session may already run an event loop (the browser tests' Playwright)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction

from memory.broadcast import group_name
from memory.contexts import create_context
from memory.errors import RuleViolation
from memory.tx.engine import submit_transaction


async def _listen(slug: str) -> str:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group_name(slug), channel)
    return channel


async def _receive(channel: str, timeout: float) -> dict[str, Any] | None:
    layer = get_channel_layer()
    try:
        return await asyncio.wait_for(layer.receive(channel), timeout)
    except TimeoutError:
        return None


def on_worker_thread(body: Callable[[], None]) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # re-raised on the test's thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    if errors:
        raise errors[0]


@pytest.fixture
def listened(transactional_db):
    context = create_context("live")
    channel: list[str] = []
    on_worker_thread(lambda: channel.append(async_to_sync(_listen)(context.slug)))
    return context, channel[0]


def test_commit_is_broadcast_after_it_lands(listened):
    on_worker_thread(lambda: _commit_is_broadcast(*listened))


def test_rolled_back_commit_is_never_broadcast(listened):
    on_worker_thread(lambda: _rolled_back_commit_is_not_broadcast(*listened))


def test_rejected_transaction_is_not_broadcast(listened):
    on_worker_thread(lambda: _rejected_transaction_is_not_broadcast(*listened))


def _commit_is_broadcast(context, channel):
    receipt = submit_transaction(context.pk, text="(context-tx (derive a (x y)))").receipt
    message = async_to_sync(_receive)(channel, 5)
    assert message is not None
    assert message["type"] == "memory.change"
    assert message["change"]["type"] == "transaction"
    assert message["change"]["version"] == receipt["version"] == 1
    assert message["change"]["frames"] == ["a"]


def _rolled_back_commit_is_not_broadcast(context, channel):
    with pytest.raises(RuntimeError), transaction.atomic():
        submit_transaction(context.pk, text="(context-tx (derive a (x y)))")
        raise RuntimeError("the surrounding work failed")
    assert async_to_sync(_receive)(channel, 0.5) is None


def _rejected_transaction_is_not_broadcast(context, channel):
    with pytest.raises(RuleViolation):
        submit_transaction(context.pk, text="(context-tx (revise ghost (x y)))")
    assert async_to_sync(_receive)(channel, 0.5) is None
