"""Live updates leave only after the database commit (rule 4), on the configured layer
(in memory by default; Redis when CHANNEL_LAYER_URL is set, as in CI's second pass)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from memory.broadcast import group_name
from memory.contexts import create_context
from memory.engine import submit_transaction
from memory.errors import RuleViolation


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


@pytest.fixture
def listened(transactional_db):
    context = create_context("live")
    channel = async_to_sync(_listen)(context.slug)
    return context, channel


def test_commit_is_broadcast_after_it_lands(listened):
    context, channel = listened
    receipt = submit_transaction(context.pk, text="(context-tx (derive a (x y)))").receipt
    message = async_to_sync(_receive)(channel, 5)
    assert message is not None
    assert message["type"] == "memory.change"
    assert message["change"]["type"] == "transaction"
    assert message["change"]["version"] == receipt["version"] == 1
    assert message["change"]["frames"] == ["a"]


def test_rolled_back_commit_is_never_broadcast(listened):
    context, channel = listened
    with pytest.raises(RuntimeError), transaction.atomic():
        submit_transaction(context.pk, text="(context-tx (derive a (x y)))")
        raise RuntimeError("the surrounding work failed")
    assert async_to_sync(_receive)(channel, 0.5) is None


def test_rejected_transaction_is_not_broadcast(listened):
    context, channel = listened
    with pytest.raises(RuleViolation):
        submit_transaction(context.pk, text="(context-tx (revise ghost (x y)))")
    assert async_to_sync(_receive)(channel, 0.5) is None
