"""What the health endpoints answer (`api.views.health`, docs/production.md)."""

from __future__ import annotations

from typing import Literal, TypedDict


class Health(TypedDict):
    """`live`: the process serves HTTP; `ready`: its database is reachable and migrated."""

    status: Literal["live", "ready"]
