"""Reads of the present or as of a version (R52): `reading(context, as_of)` is the one place
that chooses; the frame, relation and recall endpoints ask the object it returns.

Without `as_of` the present rows are read; with it (even the present version) the history
tables are (`memory.versions.asof`), so an `as_of` answer is the same whenever it is asked.
"""

from __future__ import annotations

from typing import Any

from memory.errors import ErrorCode, InvalidRequest, NotFound
from memory.models import Context, Frame, Relation
from memory.read.lists import get_frame, list_frames, list_relations
from memory.read.pages import frame_history_page
from memory.read.paging import Page
from memory.shapes.history import FrameHistoryPage
from memory.shapes.recall import RecallJson
from memory.versions import asof
from memory.versions.points import Point, resolve_point
from memory.vocabulary import is_frame_id


class Present:
    """Reads of the context as it is now."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.tick = context.tick
        self.as_of: int | None = None  # the version read, None for the present (cursors)

    def frames(
        self, *, status: str | None, source: str | None, after_id: str, limit: int
    ) -> Page[Frame]:
        """Frames by id (`memory.read.lists.list_frames`)."""
        return list_frames(
            self.context, after_id=after_id, limit=limit, status=status, source=source
        )

    def frame(self, frame_id: str) -> Frame:
        """The frame `frame_id`; NotFound when there is none."""
        frame = get_frame(self.context, frame_id) if is_frame_id(frame_id) else None
        if frame is None:
            raise NotFound(f"frame {frame_id!r} not found")
        return frame

    def history_page(self, frame: Frame, *, before: int | None, limit: int) -> FrameHistoryPage:
        """A page of the frame's revisions and write history (`frame_history_page`)."""
        return frame_history_page(frame, before=before, limit=limit)

    def relations(self, **filters: Any) -> Page[Relation]:
        """Relations (`memory.read.lists.list_relations`, same arguments)."""
        return list_relations(self.context, **filters)

    def recall(self, **kwargs: Any) -> RecallJson:
        """A recall page (`memory.recall.graph.recall`, same arguments)."""
        from memory.recall.graph import recall

        return recall(self.context, **kwargs)


class AsOf(Present):
    """Reads of the context as it was at the end of a version, from the history."""

    def __init__(self, context: Context, point: Point) -> None:
        super().__init__(context)
        self.point = point
        self.tick = point.tick
        self.as_of = point.version

    def frames(
        self, *, status: str | None, source: str | None, after_id: str, limit: int
    ) -> Page[Frame]:
        """Frames as of the point; `source` is refused (it lists citing frames now)."""
        if source:
            raise InvalidRequest(
                "source lists the frames citing it now; it cannot be combined with as_of",
                code=ErrorCode.CONFLICTING_FILTERS,
                details=[{"field": "source"}, {"field": "as_of"}],
            )
        return asof.frames_as_of(
            self.context, self.point, after_id=after_id, limit=limit, status=status
        )

    def frame(self, frame_id: str) -> Frame:
        """The frame as it was; NotFound when it did not exist yet."""
        point = self.point
        found = asof.frame_as_of(self.context, point, frame_id) if is_frame_id(frame_id) else None
        if found is None:
            raise NotFound(f"frame {frame_id!r} as of version {point.version} not found")
        return found

    def history_page(self, frame: Frame, *, before: int | None, limit: int) -> FrameHistoryPage:
        """The page without what was written after the point (its last revision is then's)."""
        page = frame_history_page(frame, before=before, limit=limit)
        version = self.point.version
        page["revisions"] = [r for r in page["revisions"] if r["version"] <= version]
        page["write_history"] = [h for h in page["write_history"] if h["version"] <= version]
        return page

    def relations(self, **filters: Any) -> Page[Relation]:
        """Relations as of the point (`memory.versions.asof.relations_as_of`)."""
        return asof.relations_as_of(self.context, self.point, **filters)

    def recall(self, **kwargs: Any) -> RecallJson:
        """A recall over the graph as it was (`memory.versions.asof.recall_as_of`)."""
        return asof.recall_as_of(self.context, self.point, **kwargs)


def reading(context: Context, as_of: int | None) -> Present:
    """The reads for an `as_of` parameter: the present without one, else the history at the
    end of that version (InvalidRequest `invalid_version` when the context never had it)."""
    if as_of is None:
        return Present(context)
    return AsOf(context, resolve_point(context, as_of))
