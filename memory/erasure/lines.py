"""Tombstones (R64) as the API shows them (`tombstone_json`) and in exports: an export
carries them as `erasure` lines, an import keeps them. Neither holds the erased text."""

from __future__ import annotations

from typing import Any, cast

from memory.models import Context, Erasure
from memory.shapes.erasures import ErasureLine, TombstoneJson
from memory.versions.export_file import export_time

# The stored columns an import writes back as they are (the time is parsed).
FIELDS = tuple(name for name in ErasureLine.__annotations__ if name not in ("type", "erased_at"))


def erasure_line(t: Erasure) -> ErasureLine:
    """A tombstone as an export line."""
    return {
        "type": "erasure",
        "request": t.request,
        "target": t.target,
        "ref": t.ref,
        "span_start": t.span_start,
        "span_end": t.span_end,
        "label": t.label,
        "matches": t.matches,
        "reason": t.reason,
        "erased_by": t.erased_by,
        "origin": t.origin,
        "erased_at": t.erased_at.isoformat(),
    }


def erasure_lines(context: Context) -> list[ErasureLine]:
    """The context's tombstones as export lines, oldest first."""
    return [erasure_line(t) for t in Erasure.objects.filter(context=context).order_by("pk")]


def restore_erasures(context: Context, lines: list[dict[str, Any]]) -> None:
    """Write the tombstones of an import (inside its last database transaction)."""
    Erasure.objects.bulk_create(
        [
            Erasure(
                context=context,
                erased_at=export_time(line["erased_at"], f"erased_at of erasure {number}"),
                **{name: line.get(name) for name in FIELDS if line.get(name) is not None},
            )
            for number, line in enumerate(lines, start=1)
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
