"""The explorer's shapes: a context's card in the list and the first paint of one context,
both made of the API's shapes."""

from __future__ import annotations

from typing import TypedDict

from memory.shapes.context import ContextJson
from memory.shapes.events import EventJson
from memory.shapes.frames import FrameJson
from memory.shapes.history import TransactionJson
from memory.shapes.nodes import RelationJson


class ContextCard(ContextJson):
    """A context with counts of its `frames` not retired and of those `retiring`."""

    frames: int
    retiring: int


def context_card(context: ContextJson, frames: int, retiring: int) -> ContextCard:
    """The card of a context: its shape and its two frame counts."""
    return {**context, "frames": frames, "retiring": retiring}


class ExplorerSnapshot(TypedDict):
    """Everything the explorer draws first for one context."""

    context: ContextJson
    frames: list[FrameJson]
    relations: list[RelationJson]
    source_events: list[EventJson]
    events: list[EventJson]
    transactions: list[TransactionJson]
