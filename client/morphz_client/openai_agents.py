"""The OpenAI Agents SDK's `Session` on Morphz events (R67): `MorphzSession(session_id, client)`.

How it works: docs/internals.md, section `client/morphz_client/openai_agents.py`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, cast

from morphz_client.client import MorphzClient
from morphz_client.errors import RuleViolationError
from morphz_client.types import AppendableKind, NewEvent

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["MorphzSession", "thread_of"]

MARK = "openai_agents"
_THREAD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,96}")
_TOOL_OUTPUTS = (
    "function_call_output",
    "computer_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
    "shell_call_output",
    "apply_patch_call_output",
    "mcp_call_output",
)


def thread_of(session_id: str) -> str:
    """The Morphz thread of session `session_id` (exact: different ids, different threads)."""
    if _THREAD.fullmatch(session_id):
        return f"oa:{session_id}"
    return "oa-h:" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _text(content: Any) -> str:
    """The readable text of an item's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text") or part.get("refusal")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def _kind_and_text(item: dict[str, Any]) -> tuple[AppendableKind, str]:
    kind = item.get("type")
    if kind in _TOOL_OUTPUTS:
        output = item.get("output")
        return "tool_result", output if isinstance(output, str) else json.dumps(output)
    if item.get("role") in ("user", "system", "developer") and kind in (None, "message"):
        text = _text(item.get("content"))
        # A user message must have content; one of images only shows as its JSON.
        return "user_message", text or json.dumps(item, ensure_ascii=False)
    if kind in (None, "message"):
        return "agent_message", _text(item.get("content"))
    if kind == "function_call":
        return "agent_message", f"{item.get('name')}({item.get('arguments', '')})"
    if kind == "reasoning":
        return "agent_message", _text(item.get("summary"))
    return "agent_message", json.dumps(item, ensure_ascii=False)


def _is_reply(item: dict[str, Any]) -> bool:
    return item.get("role") == "assistant" and item.get("type") in (None, "message")


class MorphzSession:
    """An OpenAI Agents SDK session (the `agents.memory.Session` protocol) kept as events of
    a Morphz thread; see the module docstring. Pass it to `Runner.run(..., session=...)`.

    `session_settings` (an `agents.memory.SessionSettings`) gives the default `limit`."""

    def __init__(
        self, session_id: str, client: MorphzClient, *, session_settings: Any = None
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        self.session_id = session_id
        self.client = client
        self.session_settings = session_settings
        self.thread = thread_of(session_id)

    # -- the protocol --------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items, oldest first; `limit` N > 0 the newest N, 0 none (as `SQLiteSession`);
        without it the settings' limit, else all."""
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        items = [cast("TResponseInputItem", i) for _e, i in await asyncio.to_thread(self._live)]
        if limit is None or limit < 0:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append `items` in order as events of the session's thread."""
        if items:
            await asyncio.to_thread(self._add, [dict(cast(Any, item)) for item in items])

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and answer the newest item (None when the session is empty)."""
        return cast("TResponseInputItem | None", await asyncio.to_thread(self._pop))

    async def clear_session(self) -> None:
        """Remove every item."""
        await asyncio.to_thread(self._clear)

    # -- the work, synchronous -----------------------------------------------------------

    def _live(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The session's live (event, item) pairs, oldest first."""
        live: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        for event in self.client.iter_events(thread=self.thread, limit=500):
            mark = event.get("payload")
            mark = mark.get(MARK) if isinstance(mark, dict) else None
            if not isinstance(mark, dict) or mark.get("session") != self.session_id:
                continue
            if "item" in mark:
                live[event["seq"]] = (dict(event), mark["item"])
            for seq in mark.get("removed", ()):
                live.pop(seq, None)
        return [live[seq] for seq in sorted(live)]

    def _add(self, items: list[dict[str, Any]]) -> None:
        open_refs: list[str] | None = None
        batch: list[NewEvent] = []
        for item in items:
            kind, text = _kind_and_text(item)
            new: NewEvent = {
                "kind": kind,
                "content": text,
                "thread": self.thread,
                "payload": {MARK: {"session": self.session_id, "item": item}},
            }
            if _is_reply(item):
                # Its requests must have refs: write what came before, then ask which are open.
                if batch:
                    self.client.append_events(batch)
                    batch = []
                    open_refs = None
                if open_refs is None:
                    open_refs = self._open_requests()
                if open_refs:
                    new["delivers"] = open_refs
                    open_refs = []
            batch.append(new)
        if batch:
            self.client.append_events(batch)

    def _open_requests(self) -> list[str]:
        return [
            event["ref"]
            for event in self.client.iter_events(thread=self.thread, status="open", limit=500)
        ]

    def _pop(self) -> dict[str, Any] | None:
        live = self._live()
        if not live:
            return None
        event, item = live[-1]
        self._remove([event], "pop_item")
        return item

    def _clear(self) -> None:
        live = self._live()
        if live:
            self._remove([event for event, _item in live], "clear_session")

    def _remove(self, events: list[dict[str, Any]], why: str) -> None:
        """Append the marker that removes `events` (delivering their open requests), then retire
        the removed observations that are still in the model input."""
        refs = [e["ref"] for e in events if e.get("request") == "open"]
        self.client.append_event(
            "agent_message",
            f"session {self.session_id}: {why} removed {len(events)} item(s)",
            payload={MARK: {"session": self.session_id, "removed": [e["seq"] for e in events]}},
            thread=self.thread,
            delivers=refs or None,
        )
        active = [e["ref"] for e in events if e.get("status") == "active"]
        if active:
            # Already retired by someone else is fine: the marker alone decides the session.
            with contextlib.suppress(RuleViolationError):
                self.client.submit(
                    ops=[{"op": "retire", "refs": active}],
                    reason=f"session {self.session_id}: {why}",
                    thread=self.thread,
                )
