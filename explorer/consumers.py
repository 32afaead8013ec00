"""Websocket consumer: one group per context; it only listens and forwards, never writes."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from memory.broadcast import group_name
from memory.read.access import context_for_person


class ContextConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        context = await database_sync_to_async(context_for_person)(slug, user)
        if context is None:
            await self.close(code=4404)
            return
        self.group = group_name(context.slug)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        group = getattr(self, "group", None)
        if group:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def memory_change(self, message: dict[str, Any]) -> None:
        await self.send_json(message["change"])
