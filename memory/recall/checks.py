"""Checks of a recall: its parameters, its cursor (signed, bound to the context, the query
and the cognitive version) and the evaluation view it runs in."""

from __future__ import annotations

from typing import Any

from memory.errors import ErrorCode, InvalidField, InvalidRequest, StaleCursor, StaleView
from memory.limits import RECALL_MAX_DEPTH, RECALL_MAX_NODES
from memory.models import Context, Evaluation
from memory.read.history import check_ref
from memory.read.paging import SignedCursor
from memory.vocabulary import seq_of

DIRECTIONS = ("ancestors", "descendants", "both")
CURSOR_SALT = "morphz.recall.cursor"


def default_direction(root: Any) -> str:
    """The walk a recall takes when it names none: from a frame its ancestors (what it stands
    on), from an event ref the frames citing it (an event's ancestors are itself alone)."""
    return "descendants" if seq_of(root) is not None else "ancestors"


def check_params(
    frame_id: Any, depth: Any, direction: Any, max_nodes: Any, flags: dict[str, Any]
) -> None:
    """InvalidRequest (`invalid_frame_id`, `invalid_ref`, `invalid_depth`, `invalid_direction`,
    `invalid_max_nodes`, `invalid_flag`) for a recall's parameters out of their ranges."""
    check_ref(frame_id, "frame_id")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= RECALL_MAX_DEPTH:
        raise InvalidField(
            "depth",
            f"depth must be an integer from 1 to {RECALL_MAX_DEPTH}; got {depth!r}",
            min=1,
            max=RECALL_MAX_DEPTH,
        )
    if direction not in DIRECTIONS:
        raise InvalidField(
            "direction",
            f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}",
            allowed=list(DIRECTIONS),
        )
    if (
        isinstance(max_nodes, bool)
        or not isinstance(max_nodes, int)
        or not 1 <= max_nodes <= RECALL_MAX_NODES
    ):
        raise InvalidField(
            "max_nodes",
            f"max_nodes must be an integer from 1 to {RECALL_MAX_NODES}; got {max_nodes!r}",
            min=1,
            max=RECALL_MAX_NODES,
        )
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidField(name, f"{name} must be true or false")


CURSOR = SignedCursor(CURSOR_SALT, restart="start the recall again")


def params_hash(params: dict[str, Any]) -> str:
    """A short hash of the recall's parameters; a cursor is bound to it."""
    return CURSOR.fingerprint(params)


def issue_cursor(context_pk: int, qhash: str, offset: int, version: int) -> str:
    """The cursor of the page starting at `offset` of the walk at `version`."""
    return CURSOR.issue(context_pk, qhash, offset, v=version)


def read_cursor(cursor: Any, context_pk: int, qhash: str) -> tuple[int, Any]:
    """(the offset, the version it was issued at) of a cursor; the version is checked
    against the walk's snapshot by `check_cursor_version`. 400 `invalid_cursor` otherwise
    (`memory.read.paging.SignedCursor`)."""
    at = CURSOR.read(cursor, context_pk, qhash)
    if at.offset < 1:  # the first page is asked without a cursor
        raise CURSOR.refused("malformed cursor", "malformed")
    return at.offset, at.fixed.get("v")


def check_cursor_version(issued: Any, version: int) -> None:
    """StaleCursor (409) when the cursor was issued at another cognitive version than
    `version` (the graph it walked has changed)."""
    if issued != version:
        raise StaleCursor(
            f"the context changed since this cursor was issued (version {issued} -> "
            f"{version}); start the recall again",
            details=[{"reason": "version_changed", "cursor_version": issued, "version": version}],
        )


def context_version(context_pk: int) -> int:
    """The context's cognitive version now."""
    return Context.objects.values_list("version", flat=True).get(pk=context_pk)


def check_view(context_pk: int, version: int, view_version: Any, evaluation_id: Any) -> None:
    """StaleView when the recall runs inside a view (`view_version`, or the evaluation
    `evaluation_id` saw) older than the context's `version`; InvalidRequest for a malformed
    view version, one ahead of `version` (`invalid_view_version`, as a base version ahead
    is `invalid_base_version`) or an evaluation of another context (`unknown_evaluation`)."""
    if view_version is not None:
        if isinstance(view_version, bool) or not isinstance(view_version, int):
            raise InvalidRequest(
                "view_version must be an integer", code=ErrorCode.INVALID_VIEW_VERSION
            )
        if view_version > version:  # a version the context never had: a mistake, not age
            raise InvalidRequest(
                f"view_version {view_version} is ahead of the context's version {version}; "
                "send the version an evaluation returned",
                code=ErrorCode.INVALID_VIEW_VERSION,
                details=[{"field": "view_version", "version": version}],
            )
        if view_version != version:
            raise StaleView(
                f"this view is version {view_version} but the context is at version {version}; "
                "evaluate again before recalling",
                details=[{"view_version": view_version, "version": version}],
            )
    if evaluation_id is not None:
        evaluation = (
            Evaluation.objects.filter(pk=evaluation_id, context_id=context_pk)
            .only("view_version")
            .first()
        )
        if evaluation is None:
            raise InvalidRequest(
                f"evaluation {evaluation_id} does not belong to this context",
                code=ErrorCode.UNKNOWN_EVALUATION,
            )
        if evaluation.view_version != version:
            raise StaleView(
                f"evaluation {evaluation_id} saw version {evaluation.view_version} but the context is at "
                f"version {version}; evaluate again before recalling",
                details=[{"view_version": evaluation.view_version, "version": version}],
            )
