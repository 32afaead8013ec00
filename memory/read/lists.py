"""Read-only lists and details the REST API serves (R35: persistent state, never the index).

Everything here reads; nothing writes. Lists are keyset-paged: the caller passes the last key
it saw (`after`) and a `limit`, and gets at most `limit` rows in key order plus whether more
follow. Keys are the natural order of each list (event `seq`, frame id, relation and
transaction row ids), so a page never skips or repeats a row when others are appended.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Left

from memory.errors import NotFound
from memory.kinds import OBSERVATION_KINDS
from memory.limits import EVENT_PREVIEW_CHARS
from memory.models import Context, Event, Frame, FrameRevision, Relation, TransactionRecord
from memory.read.history import check_frame_id, check_ref
from memory.read.pages import bounded_transaction_queryset, bounded_transactions
from memory.read.paging import Page
from memory.vocabulary import seq_of

# Event "status" filter values: an event's status (active, retired, recorded); requests open or
# delivered; inputs not yet claimed by an evaluation are pending.
EVENT_STATUS_FILTERS = ("active", "retired", "recorded", "pending", "open", "delivered")


def _page(queryset: QuerySet[Any], limit: int) -> Page[Any]:
    rows = list(queryset[: limit + 1])
    return Page(items=rows[:limit], has_more=len(rows) > limit)


def list_events(
    context: Context,
    *,
    kind: str | None = None,
    thread: str | None = None,
    status: str | None = None,
    after_seq: int = 0,
    limit: int = 100,
) -> Page[Event]:
    """Events oldest first (newest last), after `after_seq`, each with a `preview` (the
    text is deferred): a `Page` of at most `limit`. `status` is one of
    EVENT_STATUS_FILTERS; filters compare exactly. Reads only, no lock (R35)."""
    queryset = with_preview(Event.objects.filter(context=context, seq__gt=after_seq))
    if kind:
        queryset = queryset.filter(kind=kind)
    if thread:
        queryset = queryset.filter(thread=thread)
    if status == "active":
        queryset = queryset.filter(active=True)
    elif status == "retired":
        queryset = queryset.filter(kind__in=OBSERVATION_KINDS, active=False)
    elif status == "recorded":
        queryset = queryset.exclude(kind__in=OBSERVATION_KINDS)
    elif status == "pending":
        queryset = queryset.filter(pending=True)
    elif status in ("open", "delivered"):
        queryset = queryset.filter(request_state=status)
    return _page(queryset.order_by("seq"), limit)


def with_preview(queryset: QuerySet[Event]) -> QuerySet[Event]:
    """Leave the text out and cut a preview in the database, so a large log is never loaded
    to make a list: lists carry the preview and the size; the text is read in chunks."""
    return queryset.defer("content").annotate(preview=Left("content", EVENT_PREVIEW_CHARS))


def list_frames(
    context: Context,
    *,
    status: str | None = None,
    source: str | None = None,
    after_id: str = "",
    limit: int = 100,
) -> Page[Frame]:
    """Frames by frame id after `after_id` (filters `status`, and `source`: the frames
    citing that event ref or frame id, R63, through the GIN index on `sources`): a `Page`
    of at most `limit`. A `source` of neither form is refused (`check_ref`); one naming no
    event or frame of the context is NotFound, as recall's root is: "nothing cites it" is
    an empty list, a typo is not."""
    queryset = Frame.objects.filter(context=context)
    if status:
        queryset = queryset.filter(status=status)
    if source:
        queryset = queryset.filter(sources__contains=[existing_source(context, source)])
    if after_id:
        queryset = queryset.filter(frame_id__gt=after_id)
    return _page(queryset.order_by("frame_id"), limit)


def existing_source(context: Context, source: str) -> str:
    """`source` when it names an event or a frame of `context`; InvalidRequest when it is
    neither form (`check_ref`), NotFound naming it when no such item exists."""
    ref = check_ref(source, "source")
    seq = seq_of(ref)
    if seq is None:
        return existing_frame_id(context, ref, "source")
    if not Event.objects.filter(context=context, seq=seq).exists():
        raise NotFound(
            f"source: event {ref!r} does not exist in this context",
            details=[{"field": "source", "ref": ref}],
        )
    return ref


def existing_frame_id(context: Context, frame_id: str, field: str) -> str:
    """`frame_id` when a frame of `context` has it (ever: a retired frame counts);
    InvalidField `invalid_frame_id` naming `field` when it cannot be a frame id, NotFound
    naming it when no frame has it, so a typo is not answered as an empty list."""
    frame_id = check_frame_id(frame_id, field)
    if not Frame.objects.filter(context=context, frame_id=frame_id).exists():
        raise NotFound(
            f"{field}: frame {frame_id!r} does not exist in this context",
            details=[{"field": field, "ref": frame_id}],
        )
    return frame_id


def get_frame(context: Context, frame_id: str) -> Frame | None:
    """The frame `frame_id` of this context, or None."""
    return Frame.objects.filter(context=context, frame_id=frame_id).first()


def frame_revisions(frame: Frame) -> list[FrameRevision]:
    """Every body the frame had, oldest first, with the committed version that wrote it."""
    return list(
        FrameRevision.objects.filter(frame=frame).select_related("transaction").order_by("revision")
    )


def list_relations(
    context: Context,
    *,
    subject: str | None = None,
    object_id: str | None = None,
    name: str | None = None,
    include_removed: bool = False,
    after_pk: int = 0,
    limit: int = 100,
    version: int | None = None,
) -> Page[Relation]:
    """Relations by id after `after_pk`: live ones only unless `include_removed`; filters
    `subject`, `object_id` (frame ids) and `name`; `limit` per page. With `version`, as they
    were at its end (R52): created by then, and removed only if removed by then."""
    queryset = Relation.objects.filter(context=context, pk__gt=after_pk).select_related(
        "subject", "object"
    )
    if version is not None:
        queryset = queryset.filter(created_version__lte=version)
    if not include_removed and version is None:
        queryset = queryset.filter(removed_version__isnull=True)
    elif not include_removed:  # NULL or later than `version`
        queryset = queryset.exclude(removed_version__lte=version)
    if subject is not None:
        queryset = queryset.filter(subject__frame_id=existing_frame_id(context, subject, "subject"))
    if object_id is not None:
        queryset = queryset.filter(object__frame_id=existing_frame_id(context, object_id, "object"))
    if name:
        queryset = queryset.filter(name=name)
    page = _page(queryset.order_by("pk"), limit)
    if version is not None:
        for relation in page.items:  # removed after the point: live at it
            if relation.removed_version is not None and relation.removed_version > version:
                relation.removed_version = None
    return page


def list_transactions(
    context: Context,
    *,
    frame: str | None = None,
    status: str | None = None,
    after_pk: int = 0,
    limit: int = 50,
) -> Page[TransactionRecord]:
    """Submitted transactions oldest first, after `after_pk`: a `Page` of at most `limit`,
    texts and operations bounded (memory.read.pages). `frame` keeps those that touched that
    frame (through the GIN index on `frame_ids`); `status` is `committed` or `rejected`."""
    queryset = TransactionRecord.objects.filter(context=context, pk__gt=after_pk).select_related(
        "event"
    )
    if frame is not None:
        queryset = queryset.filter(Q(frame_ids__contains=[check_frame_id(frame, "frame")]))
    if status:
        queryset = queryset.filter(status=status)
    # Texts and operations are bounded per record (memory.read.pages): a page of 200 transactions
    # each 4 MB long must not be loaded, let alone sent.
    page = _page(bounded_transaction_queryset(queryset).order_by("pk"), limit)
    bounded_transactions(page.items)
    return page
