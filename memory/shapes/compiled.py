"""The compiled model input (R21): the active context as structured data and as prompt text,
with its token estimate."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from memory.shapes.context import PressureJson
from memory.shapes.events import Observation
from memory.shapes.frames import WindowView


class Dropped(TypedDict):
    version: int
    fields: list[str]


class FrameItem(TypedDict):
    """A live frame in the input; retiring ones carry their window, and a frame whose
    revision dropped fields says which."""

    id: str
    revision: int
    status: str
    protected: bool
    body: Any
    sources: list[str]
    tokens: int
    retire: NotRequired[WindowView]
    dropped: NotRequired[Dropped]


class LastSent(TypedDict):
    ref: str
    preview: str


class OpenRequest(TypedDict):
    ref: str
    thread: str
    preview: str
    last_agent_message: NotRequired[LastSent | None]


class PendingAction(TypedDict):
    ref: str
    thread: str
    name: str | None
    ticks: int
    stale: bool


class InputState(TypedDict):
    context: str
    tick: int
    version: int
    pressure: PressureJson
    open_requests: list[OpenRequest]
    pending_actions: list[PendingAction]
    tokens: int


class InputRelation(TypedDict):
    subject: str
    name: str
    object: str


class CompiledContext(TypedDict):
    state: InputState
    frames: list[FrameItem]
    relations: list[InputRelation]
    observations: list[Observation]


class CompiledInput(TypedDict):
    context: CompiledContext
    text: str
    tokens: int
