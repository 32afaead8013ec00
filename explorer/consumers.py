"""Websocket consumer: one group per context; it only listens and forwards, never writes.

Access is checked when the socket opens and again before every update it forwards and every
few seconds while it is quiet (`MORPHZ_WS_RECHECK_SECONDS`): once the person's session is
gone, they are no longer staff, or they are deactivated, the socket is closed (4403) and
nothing more is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from memory.broadcast import group_name
from memory.read.access import context_for_person, person_still_allowed

CLOSE_ACCESS_ENDED = 4403


class ContextConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None
    watcher: asyncio.Task[None] | None = None

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
        session = self.scope.get("session")
        self.session_key = getattr(session, "session_key", None)
        self.user_pk = user.pk
        self.slug = context.slug
        self.group = group_name(context.slug)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.watcher = asyncio.ensure_future(self._watch())

    async def disconnect(self, code: int) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = None

    async def _allowed(self) -> bool:
        return await database_sync_to_async(person_still_allowed)(
            self.session_key, self.user_pk, self.slug
        )

    async def _end(self) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = None
        await self.close(code=CLOSE_ACCESS_ENDED)

    async def _watch(self) -> None:
        interval = float(getattr(settings, "MORPHZ_WS_RECHECK_SECONDS", 5.0))
        while self.group:
            await asyncio.sleep(interval)
            allowed = True
            with contextlib.suppress(Exception):  # a database hiccup is not a revocation
                allowed = await self._allowed()
            if not allowed:
                await self._end()
                return

    async def memory_change(self, message: dict[str, Any]) -> None:
        if not self.group:
            return
        try:
            allowed = await self._allowed()
        except Exception:
            allowed = False  # cannot confirm access: send nothing
        if not allowed:
            await self._end()
            return
        await self.send_json(message["change"])
