"""Live updates for the explorer, sent only after the database commit.

A page therefore never shows a change that was rolled back.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def group_name(slug: str) -> str:
    """The Channels group of a context's explorer pages."""
    return f"context.{slug}"


def broadcast_after_commit(slug: str, change: dict[str, Any]) -> None:
    """Queue `change` for the context's websocket group once the surrounding commit lands."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        if isinstance(layer, InMemoryChannelLayer) and not layer.groups.get(group_name(slug)):
            return  # in-memory groups live in this process only: nobody is listening
        try:
            async_to_sync(layer.group_send)(
                group_name(slug), {"type": "memory.change", "change": change}
            )
        except Exception:  # a lost live update must never fail a commit that already landed
            log.exception("broadcast to %s failed", slug)

    transaction.on_commit(send)
