# long: one class with one method per REST operation, in the order of docs/rest.md, so a
# reader finds the whole API surface in one place
"""A small synchronous client for the Morphz REST API (docs/rest.md), on httpx.

One client talks to one context: a token reaches its own context only. Every non-2xx answer
raises a typed `MorphzAPIError` subclass carrying the server's `code`, `status` and `details`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, cast
from urllib.parse import quote

import httpx

from morphz_client.errors import (
    DatabaseUnavailableError,
    InvalidPathValueError,
    InvalidRefError,
    MorphzAPIError,
    MorphzError,
    ServerError,
    TooLargeError,
    error_for,
)
from morphz_client.types import (
    AppendableKind,
    AppendedEvent,
    Cancellation,
    Context,
    Diff,
    Direction,
    Evaluation,
    EvaluationDetail,
    EvaluationPage,
    Event,
    EventChunk,
    EventPage,
    Fork,
    FrameDetail,
    FramePage,
    NewEvent,
    RecallResult,
    Receipt,
    RelationPage,
    SearchResult,
    TransactionPage,
)

__all__ = ["MorphzClient"]


# Read-your-writes with replicas: the newest version the caller saw (api/base.py reads it).
MIN_VERSION_HEADER = "Morphz-Min-Version"

_EVENT_REF = re.compile(r"@e([1-9][0-9]{0,17})")


def _seq(ref: object) -> int:
    """The sequence number of `ref` (`@e42` or 42); InvalidRefError for anything else."""
    if isinstance(ref, int) and not isinstance(ref, bool) and ref >= 1:
        return ref
    # The server's rule (memory/vocabulary.py): "@e", ASCII digits, no leading zero.
    match = _EVENT_REF.fullmatch(ref) if isinstance(ref, str) else None
    if match:
        return int(match.group(1))
    raise InvalidRefError(ref)


# The server's rule for frame ids (memory/vocabulary.py): lower-case ASCII letters, digits,
# '.', '_' and '-', starting with a letter or digit, at most 128 characters.
_FRAME_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")


def _frame_id(frame_id: object) -> str:
    """`frame_id` as a URL path segment: only a frame id the server could hold, checked here
    so that `../transactions` or `x/?as_of=1` never reach the server as another path."""
    if not isinstance(frame_id, str) or not _FRAME_ID.fullmatch(frame_id):
        raise InvalidPathValueError(
            "invalid_frame_id", "frame_id", frame_id, "a frame id like release-v1"
        )
    return frame_id


def _evaluation_id(evaluation_id: object) -> int:
    """`evaluation_id` as a URL path segment: a positive integer."""
    if isinstance(evaluation_id, bool) or not isinstance(evaluation_id, int) or evaluation_id < 1:
        raise InvalidPathValueError(
            "invalid_request", "evaluation_id", evaluation_id, "a positive integer"
        )
    return evaluation_id


def _params(**values: Any) -> dict[str, Any]:
    """Query parameters without the unset ones; booleans and datetimes as the API reads them."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, datetime):
            value = value.isoformat()
        out[key] = value
    return out


# The keys of the transaction's JSON form (`submit` takes them as one dict too).
_JSON_FORM = frozenset({"base_version", "reason", "ops"})


def _body(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _arguments(scope: Mapping[str, Any]) -> dict[str, Any]:
    """A method's arguments, read from its `locals()` before it defines anything else, without
    `self`: each goes to the API under its own name, so no method lists its fields twice."""
    return {name: value for name, value in scope.items() if name != "self"}


_ITEM = re.compile(r"\bevents\[([0-9]+)\]")


def _in_whole_list(exc: MorphzAPIError, start: int, appended: list[AppendedEvent]) -> None:
    """Make the error of the batch that began at item `start` name items by their index in the
    whole list (the server counts from the batch's first item), and record what earlier
    batches wrote."""

    def shift(text: str) -> str:
        """`text` with each `events[i]` moved on by `start`."""
        return _ITEM.sub(lambda m: f"events[{int(m.group(1)) + start}]", text)

    details = []
    for item in exc.details:
        if isinstance(item, dict):
            item = dict(item)
            for key in ("index", "other_index"):
                if isinstance(item.get(key), int):
                    item[key] += start
            if isinstance(item.get("field"), str):
                item["field"] = shift(item["field"])
        details.append(item)
    exc.details = details
    exc.message = shift(exc.message)
    exc.args = (f"{exc.status} {exc.code}: {exc.message}",)
    exc.appended = list(appended)


def _limit_bytes(exc: MorphzAPIError) -> int | None:
    """The request body limit a 413 `too_large` names (`details[].limit_bytes`), if any."""
    for item in exc.details:
        if isinstance(item, dict) and isinstance(item.get("limit_bytes"), int):
            return int(item["limit_bytes"])
    return None


# The bulk body's bytes around its items: `{"events": [` and `]}`.
_BULK_FRAME_BYTES = len(json.dumps({"events": []}))


def _batch_end(bodies: list[dict[str, Any]], start: int, batch: int, limit: int | None) -> int:
    """Where the batch beginning at `start` ends: at most `batch` items and, once the server's
    body limit is known, at most `limit` bytes, but always one item (an item over the limit
    alone is refused by the server, which names it). Sizes are `json.dumps` with its defaults:
    ASCII escapes and spaced separators are never shorter than what the HTTP library sends,
    so a batch packed by them fits."""
    end = min(len(bodies), start + batch)
    if limit is None:
        return end
    size = _BULK_FRAME_BYTES
    for i in range(start, end):
        size += len(json.dumps(bodies[i]).encode()) + (2 if i > start else 0)
        if size > limit and i > start:
            return i
    return end


class _TransportFailure(Exception):
    """The connection failed or dropped: the request may or may not have reached the server."""


class MorphzClient:
    """Client for one context.

    Every method raises a `MorphzAPIError` subclass for an error answer (by the server's
    `code`: InvalidRequestError 400, AuthError 401/403, NotFoundError 404, ConflictError 409,
    TooLargeError 413, RuleViolationError 422, ThrottledError 429, ServerError 5xx; see
    `morphz_client.errors`), and MorphzError when the server cannot be reached. Answers are the
    TypedDicts of `morphz_client.types`; sizes are in characters and budgets in tokens.

    >>> with MorphzClient("http://127.0.0.1:8000", token, context="demo") as mz:
    ...     mz.append_event("user_message", "Ship v1 today")"""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        context: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        retries: int = 2,
        retry_wait: float = 0.5,
    ) -> None:
        """`retries`: how often a request that is safe to repeat (a read, or a write with an
        idempotency key) is sent again after a dropped connection or a 503
        `database_unavailable`; the server answers a repeated write with its first result.
        ValueError for an empty token, or one with spaces around it (no header can carry it)."""
        if not token.strip() or token != token.strip():
            problem = "is empty" if not token.strip() else "has spaces around it"
            raise ValueError(f"the token {problem}: pass a context's API token (mz_...)")
        self.retries = retries
        self.retry_wait = retry_wait
        self.token = token  # the context's API token (it names the context)
        self._http = http or httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        self._http.headers["Authorization"] = f"Bearer {token}"
        self._owns_http = http is None
        # The newest context version this client has seen (its commits, evaluations, context
        # reads): sent with every request as Morphz-Min-Version, so a server reading from a
        # replica answers from one that holds at least what this client wrote (R68).
        self.seen_version: int | None = None
        # The server's request body limit, once a 413 has named it (append_events packs by it).
        self._body_limit: int | None = None
        self.slug = context or self._discover_context()

    # -- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP connection pool (only when the client created it)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MorphzClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        repeatable = method == "GET" or (isinstance(json, dict) and "idempotency_key" in json)
        attempt = 0
        while True:
            try:
                return self._once(method, path, params=params, json=json, headers=headers)
            except (DatabaseUnavailableError, _TransportFailure) as exc:
                attempt += 1
                if not repeatable or attempt > self.retries:
                    if isinstance(exc, _TransportFailure):
                        raise MorphzError(f"{method} {path}: {exc.__cause__}") from exc.__cause__
                    raise
                time.sleep(self.retry_wait * attempt)

    def _once(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        if self.seen_version is not None:
            headers = {MIN_VERSION_HEADER: str(self.seen_version), **(headers or {})}
        try:
            response = self._http.request(method, path, params=params, json=json, headers=headers)
        except httpx.TransportError as exc:
            raise _TransportFailure(str(exc)) from exc
        except httpx.HTTPError as exc:
            raise MorphzError(f"{method} {path}: {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success:
            if body is None:
                raise ServerError(response.status_code, "unexpected_response", "not JSON", [])
            self._saw(body)
            return body
        raise error_for(response.status_code, body)

    def _saw(self, body: Any) -> None:
        """Note the context version a receipt, an evaluation or the context carries."""
        if not isinstance(body, dict):
            return
        for key in ("version", "view_version"):
            value = body.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self.seen_version = max(self.seen_version or 0, value)

    def _get(self, path: str, scope: Mapping[str, Any]) -> Any:
        """GET the context's `path` with the calling method's arguments (its `locals()`) as
        the query string."""
        return self._request("GET", self._ctx(path), params=_params(**_arguments(scope)))

    def _ctx(self, path: str = "") -> str:
        return f"/api/v1/contexts/{quote(self.slug, safe='')}/{path}"

    def _discover_context(self) -> str:
        contexts = self._request("GET", "/api/v1/contexts/")["contexts"]
        if len(contexts) != 1:
            raise MorphzError("this token sees several contexts; pass context=SLUG")
        return str(contexts[0]["slug"])

    # -- index and context ---------------------------------------------------------------

    def index(self) -> dict[str, Any]:
        """The API index: `{version, schema, docs, contexts}`: links and the slugs this token
        sees."""
        return cast(dict[str, Any], self._request("GET", "/api/v1/"))

    def contexts(self) -> list[Context]:
        """The contexts this token may use (one for a context token), each a `Context`."""
        return cast(list[Context], self._request("GET", "/api/v1/contexts/")["contexts"])

    def context(self) -> Context:
        """This context: `version`, `tick`, `last_seq`, `settings` (ticks, tokens, percents of
        capacity), `pressure` now, `frozen`, `forked_from`."""
        return cast(Context, self._request("GET", self._ctx()))

    # -- events --------------------------------------------------------------------------

    def append_event(
        self,
        kind: AppendableKind,
        content: str,
        *,
        payload: Any = None,
        thread: str | None = None,
        delivers: list[str] | None = None,
        idempotency_key: str | None = None,
    ) -> Event:
        """Append one event (`kind` one of user_message, tool_result, agent_message,
        external_fact) with its text (`content`, at most 4,000,000 characters) and optional JSON
        `payload`; `delivers` names the requests or actions (`@e<seq>`) it answers. Returns the
        `Event` (`created` false when `idempotency_key` found an earlier one: nothing written).

        Raises InvalidRequestError (bad kind, thread or ref), TooLargeError, RuleViolationError
        (`delivers` names no request), IdempotencyKeyReusedError (the key was used for another
        event)."""
        body = _body(**_arguments(locals()))
        return cast(Event, self._request("POST", self._ctx("events/"), json=body))

    def append_events(self, events: list[NewEvent], *, batch: int = 500) -> list[AppendedEvent]:
        """Append many events in order through the bulk path (R50), `batch` (1-1000) per request;
        one `AppendedEvent` per item, in the order given.

        Each request is atomic: a bad item raises, its index in `events` named by `details`
        (`index`, `field` like `events[5].kind`) and the message, and writes nothing of its
        batch; earlier batches stay written, as the error's `appended` lists (give items
        idempotency keys and retry the whole list safely).

        A batch is also kept under the server's request body limit: the first 413 `too_large`
        refusal names the limit (`details[].limit_bytes`, nothing written), and from then on
        this client packs batches under it and sends the refused batch again in parts.
        TooLargeError still for one item whose request alone is over the limit (its index
        named, as above)."""
        if not 1 <= batch <= 1000:
            raise ValueError("batch must be 1-1000")
        bodies = [_body(**item) for item in events]
        out: list[AppendedEvent] = []
        start = 0
        while start < len(bodies):
            end = _batch_end(bodies, start, batch, self._body_limit)
            try:
                answer = self._request(
                    "POST", self._ctx("events/"), json={"events": bodies[start:end]}
                )
            except TooLargeError as exc:
                limit = _limit_bytes(exc)
                if limit is not None and end - start > 1 and limit != self._body_limit:
                    self._body_limit = limit
                    continue
                if end - start == 1:
                    exc.details = [*exc.details, {"index": 0, "field": "events[0]"}]
                    exc.message = f"events[0]: {exc.message}"
                _in_whole_list(exc, start, out)
                raise
            except MorphzAPIError as exc:
                _in_whole_list(exc, start, out)
                raise
            out.extend(cast(list[AppendedEvent], answer["events"]))
            start = end
        return out

    def events(
        self,
        *,
        kind: str | None = None,
        thread: str | None = None,
        status: str | None = None,
        after: int | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> EventPage:
        """One page of events, oldest first: filters `kind`, `thread`, `status` (active, retired,
        recorded, pending, open, delivered), after seq `after`; `limit` per page (1-500). Pass
        `next_cursor` back as `cursor` for the next page (InvalidRequestError for a cursor made
        for other filters)."""
        return cast(EventPage, self._get("events/", locals()))

    def iter_events(self, **filters: Any) -> Iterator[Event]:
        """Every event matching the filters (as `events` takes them), oldest first,
        following cursors."""
        cursor = None
        while True:
            page = self.events(cursor=cursor, **filters)
            yield from page["events"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def read_event(
        self, ref: str | int, *, offset: int = 0, length: int | None = None
    ) -> EventChunk:
        """A slice of an event's text: `offset` and `length` in characters (length at most
        1,048,576). The `EventChunk` has `content`, `size` (the whole text) and `next_offset`
        (None after the last slice). Raises NotFoundError for an unknown ref, InvalidRefError (a
        ValueError, code `invalid_ref`) for a malformed one (`@e42` or 42)."""
        params = _params(offset=offset, length=length)
        path = self._ctx(f"events/{_seq(ref)}/")
        return cast(EventChunk, self._request("GET", path, params=params))

    def read_event_text(self, ref: str | int, *, chunk: int = 65536) -> str:
        """The whole text of an event, read `chunk` characters at a time."""
        parts: list[str] = []
        offset: int | None = 0
        while offset is not None:
            piece = self.read_event(ref, offset=offset, length=chunk)
            parts.append(piece["content"])
            offset = piece.get("next_offset")
        return "".join(parts)

    # -- evaluations, transactions, actions ----------------------------------------------

    def evaluate(
        self,
        *,
        thread: str | None = None,
        idempotency_key: str | None = None,
        continuation: bool = False,
        include_instructions: bool = False,
    ) -> Evaluation:
        """Claim the pending inputs (of `thread`, when given), advance the tick when an outside
        fact came in, and compile the next model input: an `Evaluation` with `id`, `tick`,
        `claimed` refs, `expired` frames, `context` and its prompt `text`, and `tokens`. A
        `continuation` claims nothing and never advances the tick; `include_instructions` puts the
        model protocol's instructions ahead of the text. A retry with the same `idempotency_key`
        answers the first result."""
        body = _body(
            thread=thread,
            idempotency_key=idempotency_key,
            continuation=continuation,
            include_instructions=include_instructions or None,
        )
        return cast(Evaluation, self._request("POST", self._ctx("evaluations/"), json=body))

    def submit(
        self,
        text: str | Mapping[str, Any] | None = None,
        *,
        ops: list[dict[str, Any]] | None = None,
        base_version: int | None = None,
        reason: str | None = None,
        thread: str | None = None,
        evaluation: int | None = None,
        idempotency_key: str | None = None,
    ) -> Receipt:
        """Submit a transaction: its text form, or the JSON form (`ops` with `base_version`
        and `reason`) as keywords or as one dict (`submit({"base_version": 3, "reason":
        "...", "ops": [...]})`). Raises ParseError, RuleViolationError or ConflictError on
        rejection; TypeError for a dict key the JSON form does not have.

        With `idempotency_key` the submission is retried after a dropped connection: the
        server answers a retry with the first receipt and writes nothing (R49)."""
        if isinstance(text, Mapping):
            if ops is not None or base_version is not None or reason is not None:
                raise ValueError("pass the JSON form either as a dict or as keywords, not both")
            unknown = sorted(set(text) - _JSON_FORM)
            if unknown or "ops" not in text:
                wrong = f"has no key {', '.join(map(repr, unknown))}" if unknown else "needs ops"
                raise TypeError(
                    f"submit(): the JSON form {wrong}; its keys are base_version, reason and "
                    'ops (the text form is a string: submit("(context-tx ...)"))'
                )
            ops, base_version, reason = text["ops"], text.get("base_version"), text.get("reason")
            text = None
        if (text is None) == (ops is None):
            raise ValueError("pass either text or ops")
        if text is not None:
            body = _body(
                text=text, thread=thread, evaluation=evaluation, idempotency_key=idempotency_key
            )
        else:
            body = _body(
                base_version=base_version,
                reason=reason,
                ops=ops,
                thread=thread,
                evaluation=evaluation,
                idempotency_key=idempotency_key,
            )
        return cast(Receipt, self._request("POST", self._ctx("transactions/"), json=body))

    def transactions(
        self,
        *,
        frame: str | None = None,
        status: str | None = None,
        after: int | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> TransactionPage:
        """One page of submitted transactions, oldest first (filters `frame`, `status`
        committed/rejected, `after`: ids above it), `limit` per page (1-200); texts over
        16,384 characters are cut (`text_truncated`)."""
        return cast(TransactionPage, self._get("transactions/", locals()))

    def register_action(
        self,
        name: str,
        arguments: Any = None,
        *,
        thread: str | None = None,
        idempotency_key: str | None = None,
    ) -> Event:
        """Register an external action before running it (R12): an `Event` of kind `action`
        that stays open until a `tool_result` names it in `delivers`. Raises
        MaintenanceRequiredError while the context is in maintenance."""
        body = _body(**_arguments(locals()))
        return cast(Event, self._request("POST", self._ctx("actions/"), json=body))

    def cancel_action(self, ref: str | int, *, reason: str | None = None) -> Cancellation:
        """Cancel a pending action (R59), `ref` `@e42` or 42: the server appends a `tool_result`
        delivering it, "cancelled by {who}: {reason}", so it leaves the pending actions and the
        model reads why. Returns the `Cancellation`: its `ref` and the action's (`cancels`).

        Raises InvalidRefError before any request for a malformed ref; ConflictError (code
        `action_not_pending`) for an action already delivered or cancelled; RuleViolationError
        with code `not_an_action` for an event that is no action, `unknown_ref` for no such
        event."""
        path = self._ctx(f"actions/{_seq(ref)}/cancel/")
        return cast(Cancellation, self._request("POST", path, json=_body(reason=reason)))

    # -- frames and relations ------------------------------------------------------------

    def frames(
        self,
        *,
        status: str | None = None,
        source: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        as_of: int | None = None,
    ) -> FramePage:
        """Frames by id; `source` (an event ref like `@e42` or a frame id): only the frames
        citing it; `as_of=N` answers them as they were at the end of version N. Raises
        NotFoundError when `source` names no event or frame of the context."""
        return cast(FramePage, self._get("frames/", locals()))

    def frame(
        self,
        frame_id: str,
        *,
        as_of: int | None = None,
        history_limit: int | None = None,
        history_before: int | None = None,
    ) -> FrameDetail:
        """One frame with a page of its revisions and its write history (`FrameDetail`); `as_of=N`
        answers it as it was at the end of version N; `history_limit` (1-100, default 20) revisions
        in the page, older than `history_before` (the last page's `history.next_before`). Raises
        NotFoundError for an unknown frame."""
        params = _params(as_of=as_of, history_limit=history_limit, history_before=history_before)
        return cast(
            FrameDetail,
            self._request("GET", self._ctx(f"frames/{_frame_id(frame_id)}/"), params=params),
        )

    def relations(
        self,
        *,
        subject: str | None = None,
        object: str | None = None,
        name: str | None = None,
        include_removed: bool | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        as_of: int | None = None,
    ) -> RelationPage:
        """One page of relations, by id: filters `subject`, `object`, `name`; removed ones too with
        `include_removed`; `as_of=N` as they were at the end of version N. NotFoundError for a
        `subject` or `object` that names no frame of the context."""
        return cast(RelationPage, self._get("relations/", locals()))

    # -- recall and search ---------------------------------------------------------------

    def recall(
        self,
        frame_id: str,
        *,
        depth: int = 1,
        direction: Direction | None = None,
        include_bodies: bool = True,
        include_events: bool = False,
        max_nodes: int = 32,
        cursor: str | None = None,
        view_version: int | None = None,
        evaluation: int | None = None,
        as_observation: bool = False,
        thread: str | None = None,
        as_of: int | None = None,
    ) -> RecallResult:
        """One page of a breadth-first walk of the cognitive graph from `frame_id`: `depth` 1-4,
        `direction` ancestors/descendants/both (default: ancestors from a frame, descendants,
        the frames citing it, from an event), at most `max_nodes` (1-128) nodes and about 64 KB.
        `nodes` (frames and event leaves with previews; bodies with `include_bodies`, texts with
        `include_events`), `edges`, `next_cursor`, `version`. `as_observation` also records the page
        as a `recall_result` observation for the model. Raises NotFoundError (unknown frame),
        StaleCursorError (the context changed since the cursor), StaleViewError (`view_version` or
        `evaluation` is not the current version)."""
        body = _body(**_arguments(locals()))
        return cast(RecallResult, self._request("POST", self._ctx("recall/"), json=body))

    def search(
        self,
        q: str,
        *,
        type: str | None = None,
        status: str | None = None,
        kind: str | None = None,
        thread: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
        offset: int | None = None,
        transactions: bool | None = None,
        cursor: str | None = None,
    ) -> SearchResult:
        """Ranked hits for the words of `q` (best first), each `{type, id | ref, status, kind,
        thread, score, snippet, next}`; filters `type` (frame, event), `status`, `kind`, `thread`,
        `since`/`until` (datetimes); `limit` 1-100 per page. `total` counts the matches (exact
        up to 1,000), `lag` says how far the index is behind. Pages: `cursor` (the previous
        page's `next_cursor`, same `q` and filters) goes through every match with no repeats
        (unfiltered in a history of over 10,000 documents, broad words only among the newest
        10,000: filter to reach all); `offset` / `next_offset` through the first 1,000."""
        return cast(SearchResult, self._get("search/", locals()))

    # -- agents: the model protocol and model replies ------------------------------------

    def protocol(self) -> dict[str, Any]:
        """The model protocol with this context's settings (`version`, `instructions`,
        `tools` in the `openai` and `anthropic` shapes). `morphz_client.protocol` has the
        same offline, with default settings."""
        return cast(dict[str, Any], self._request("GET", self._ctx("protocol/")))

    def take_apart(
        self,
        text: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        *,
        delivers: list[str] | None = None,
        thread: str | None = None,
        evaluation: int | None = None,
        idempotency_key: str | None = None,
        tools: list[str] | None = None,
        on_rejection: str | None = None,
    ) -> dict[str, Any]:
        """Send a model reply to be taken apart: transactions commit, memory reads run,
        other tool calls are registered as actions, the text is recorded. Returns each
        part's outcome and `feedback`, the text the model should read next.

        A reply is one unit: when a transaction is rejected its actions and message are
        withheld (`on_rejection="proceed"` writes them anyway). `tools`: the agent's own
        tool names; a call to another name is refused `unknown_tool`. With
        `idempotency_key` (1-180 characters) a retry of the same reply writes no part
        twice. Raises InvalidRequestError for a malformed reply (nothing written)."""
        body = _body(**_arguments(locals()))
        return cast(dict[str, Any], self._request("POST", self._ctx("replies/"), json=body))

    # -- history: forks, freezing, evaluations, diff --------------------------------------

    def fork(
        self,
        *,
        slug: str | None = None,
        at_version: int | None = None,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Fork:
        """Fork this context at `at_version` (default: now); the answer carries a token for
        the new context (use it with a new MorphzClient). With `idempotency_key` the fork is
        retried after a dropped connection: the server answers a retry with the first fork
        and the same token, and makes no second fork."""
        body = _body(**_arguments(locals()))
        return cast(Fork, self._request("POST", self._ctx("forks/"), json=body))

    def set_frozen(self, frozen: bool) -> Context:
        """Freeze (every write then raises `context_frozen`) or unfreeze the context."""
        return cast(Context, self._request("PATCH", self._ctx(), json={"frozen": frozen}))

    def freeze(self) -> Context:
        """Freeze the context: every write then raises ConflictError `context_frozen`."""
        return self.set_frozen(True)

    def unfreeze(self) -> Context:
        """Unfreeze the context: writes are accepted again."""
        return self.set_frozen(False)

    def evaluations(
        self, *, thread: str | None = None, cursor: str | None = None, limit: int | None = None
    ) -> EvaluationPage:
        """One page of past evaluations, oldest first (filter `thread`): view version, tick,
        claimed refs, expired frames, tokens."""
        return cast(EvaluationPage, self._get("evaluations/", locals()))

    def evaluation(self, evaluation_id: int) -> EvaluationDetail:
        """One evaluation with the compiled input the model was given."""
        return cast(
            EvaluationDetail,
            self._request("GET", self._ctx(f"evaluations/{_evaluation_id(evaluation_id)}/")),
        )

    def diff(self, from_version: int, to_version: int | None = None) -> Diff:
        """What changed between two versions (default `to`: now)."""
        params = _params(to=to_version)
        params["from"] = from_version
        return cast(Diff, self._request("GET", self._ctx("diff/"), params=params))
