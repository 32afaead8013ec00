"""What screening on write (R65) notes of a finding: the field it was in and its kind. An
event's payload carries the notes as `screened`; a refusal's details list them."""

from __future__ import annotations

from typing import TypedDict


class ScreeningNote(TypedDict):
    field: str
    kind: str
