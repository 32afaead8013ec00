"""Tombstones (R64) as the API shows them (`tombstone_json`) and in exports: an export
carries them as `erasure` lines, an import keeps them. Neither holds the erased text."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from memory.models import Context, Erasure
from memory.shapes.erasures import TombstoneJson

FIELDS = (
    "request",
    "target",
    "ref",
    "span_start",
    "span_end",
    "label",
    "matches",
    "reason",
    "erased_by",
    "origin",
)


def erasure_lines(context: Context) -> list[dict[str, Any]]:
    """The context's tombstones as export lines, oldest first."""
    return [
        {
            "type": "erasure",
            **{name: getattr(t, name) for name in FIELDS},
            "erased_at": t.erased_at.isoformat(),
        }
        for t in Erasure.objects.filter(context=context).order_by("pk")
    ]


def restore_erasures(context: Context, lines: list[dict[str, Any]]) -> None:
    """Write the tombstones of an import (inside its last database transaction)."""
    Erasure.objects.bulk_create(
        [
            Erasure(
                context=context,
                erased_at=datetime.fromisoformat(line["erased_at"]),
                **{name: line.get(name) for name in FIELDS if line.get(name) is not None},
            )
            for line in lines
        ]
    )


def tombstone_json(t: Erasure) -> TombstoneJson:
    """A tombstone as the API shows it (never the erased text)."""
    out: TombstoneJson = {
        "id": t.pk,
        "request": t.request,
        "target": t.target,
        "ref": t.ref or None,
        "label": t.label or None,
        "matches": t.matches,
        "reason": t.reason,
        "erased_by": t.erased_by,
        "erased_at": t.erased_at.isoformat(),
        "origin": t.origin or None,
    }
    if t.target == "span":
        out["span"] = cast(list[int], [t.span_start, t.span_end])  # set on every span
    return out
