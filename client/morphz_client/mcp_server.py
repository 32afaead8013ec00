"""Morphz as an MCP server (R48), on the official `mcp` SDK (`MCPServer`).

How it works: docs/internals.md, section `client/morphz_client/mcp_server.py`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from morphz_client.client import MorphzClient
from morphz_client.errors import MorphzAPIError, MorphzError, TooLargeError, prompt_text
from morphz_client.mcp_arguments import ArgumentCheckingServer, check_arguments, refuse_blank
from morphz_client.mcp_calls import current_client, request_client, tool_call
from morphz_client.mcp_stdio import serve_stdio

__all__ = ["build_server", "current_client", "main", "server_version"]


def server_version() -> str:
    """The installed morphz-client's version: what `initialize` reports as the server's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("morphz-client")
    except PackageNotFoundError:
        return "0+unknown"


# What a search hit tells a model over MCP: the rest (scores, snippet parts, reads to
# follow) is the REST answer's.
SEARCH_HIT_FIELDS = (
    "type",
    "ref",
    "status",
    "kind",
    "snippet",
    "superseded_by",
    "coverage",
    "answers",
    "index_parts",
)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


# An MCP answer listing frames stays under about this many characters (nine frames of
# 3.9 MB made every call fail over the response cap; 20,000 small ones made 13.5 MB).
PAGE_ANSWER_CHARS = 1_000_000


def _frames_page(
    mz: MorphzClient, status: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """One REST page of frames, asked for again with half the limit while it is over the
    API's cap or PAGE_ANSWER_CHARS; a single frame over them answers its id and size only
    (read it with `frame`)."""
    while True:
        try:
            page = mz.frames(status=status, cursor=cursor, limit=limit)
        except TooLargeError:
            if limit == 1:
                raise ToolError(
                    "the next frame is larger than the API's response cap; list with "
                    "status= to skip it, or read frames by id with frame"
                ) from None
            limit = max(1, limit // 2)
            continue
        except MorphzAPIError as exc:
            raise ToolError(f"{exc.code}: {exc.message}") from None
        size = len(_dump(page))
        if size <= PAGE_ANSWER_CHARS:
            return dict(page)
        if limit == 1:
            (frame,) = page["frames"]
            shown = {k: v for k, v in frame.items() if k != "body"}
            return {
                "frames": [{**shown, "body_omitted": True, "answer_chars": size}],
                "next_cursor": page["next_cursor"],
            }
        limit = max(1, limit // 2)


# long: one closure per MCP tool, registered on the server it builds; each is short
def build_server(instructions: str | None = None) -> MCPServer:
    """The MCP server; tools act through `current_client` and take their arguments as the
    REST API takes fields (`morphz_client.mcp_arguments`)."""
    from morphz_protocol import instructions as offline_instructions

    server = ArgumentCheckingServer(
        "morphz",
        version=server_version(),
        instructions=instructions
        or "Morphz memory: read active_context, change memory with commit (a context "
        "transaction), recall/search/read_event to look things up. The morphz_protocol "
        "prompt teaches the transaction language.",
    )

    # -- native memory tools ------------------------------------------------------------

    @server.tool()
    def active_context(include_instructions: bool = False) -> str:
        """Evaluate: claim new inputs and return the compiled active context (state line,
        frames, relations, observations with @eN refs). Write base-version from its version."""
        mz = request_client()
        return str(
            tool_call(lambda: prompt_text(mz.evaluate(include_instructions=include_instructions)))
        )

    @server.tool()
    def commit(tx: str) -> str:
        """Commit one context transaction, e.g. (context-tx (base-version 12) (derive
        test-result (from @e42) (tests passed)) (retire @e42)). All or nothing; a rejection
        names each failing operation with its index, code and message."""
        # Refused here as an argument: the reply path would answer in its feedback form,
        # naming its own tool (context_tx), which MCP does not offer.
        refuse_blank(
            "tx", tx, "the text of one context transaction, like (context-tx (base-version 12) ...)"
        )
        mz = request_client()
        out = tool_call(
            lambda: mz.take_apart(
                "", [{"id": "mcp", "name": "context_tx", "arguments": {"tx": tx}}]
            )
        )
        entry = out["transactions"][0] if out["transactions"] else None
        if entry is None or entry["status"] != "committed":
            raise ToolError(out["feedback"])
        return _dump(
            {"receipt": entry["receipt"], "ref": entry["ref"], "feedback": out["feedback"]}
        )

    @server.tool()
    def append(
        kind: str, content: str, delivers: list[str] | None = None, thread: str | None = None
    ) -> str:
        """Append an event: kind user_message, tool_result, agent_message or external_fact.
        delivers lists the request or action refs (@eN) it answers."""
        mz = request_client()
        event = tool_call(
            lambda: mz.append_event(kind, content, delivers=delivers, thread=thread)  # type: ignore[arg-type]
        )
        return _dump({"ref": event["ref"], "seq": event["seq"], "kind": event["kind"]})

    @server.tool()
    def recall(
        frame_id: str,
        depth: int = 1,
        direction: str | None = None,
        include_bodies: bool = True,
        include_events: bool = False,
        max_nodes: int = 16,
        cursor: str | None = None,
    ) -> str:
        """Walk the cognitive graph from a frame, or an event ref like @e42 (retired items
        too): ancestors follows sources and relations subject->object, descendants what
        cites the frame or event, both the union (default: ancestors from a frame,
        descendants from an event). Returns nodes, edges and next_cursor."""
        mz = request_client()
        return _dump(
            tool_call(
                lambda: mz.recall(
                    frame_id,
                    depth=depth,
                    direction=direction,  # type: ignore[arg-type]
                    include_bodies=include_bodies,
                    include_events=include_events,
                    max_nodes=max_nodes,
                    cursor=cursor,
                )
            )
        )

    @server.tool()
    def search(
        q: str,
        type: str | None = None,
        status: str | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        cursor: str | None = None,
    ) -> str:
        """Search frames and events (retired too) by their words, questions reordered by
        meaning; live memory ranks first. Hits carry ref, status, kind, snippet, and when
        they apply superseded_by (the live frames replacing it), coverage (the query's
        content words it holds, holds only through the turn it answers, lacks), answers
        (that turn's ref, to read) and index_parts. `total` counts the matches, exactly while
        `total_exact`. `next_cursor` (same q and filters) gives the next page with no
        repeats; null on the last page."""
        mz = request_client()
        result = tool_call(
            lambda: mz.search(q, type=type, status=status, limit=limit, cursor=cursor)
        )
        hits = [{k: hit[k] for k in SEARCH_HIT_FIELDS if k in hit} for hit in result["hits"]]
        return _dump(
            {
                "hits": hits,
                "total": result.get("total"),
                # false: `total` is a floor (past 1,000 matches, or a broad word limited to
                # the newest documents), not every match there is.
                "total_exact": result.get("total_exact"),
                "next_cursor": result.get("next_cursor"),
                "lag": result.get("lag"),
            }
        )

    @server.tool()
    def read_event(ref: str, offset: int = 0, length: int = 8000) -> str:
        """Read an event's text by ref in chunks (any event, retired too); next_offset
        continues, null at the end."""
        mz = request_client()
        chunk = tool_call(lambda: mz.read_event(ref, offset=offset, length=length))
        return _dump(
            {
                k: chunk.get(k)
                for k in ("ref", "kind", "status", "size", "offset", "next_offset", "content")
            }
        )

    @server.tool()
    def frame(id: str) -> str:
        """One frame (any status) with its revisions and write history."""
        mz = request_client()
        return _dump(tool_call(lambda: mz.frame(id)))

    @server.tool()
    def frames(
        status: str | None = None,
        cursor: str | None = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> str:
        """One page of the context's frames by id: id, revision, status, protected, body,
        sources; `next_cursor` continues (null on the last page). A page stays under about
        1 MB: fewer frames come when they are large."""
        mz = request_client()
        return _dump(_frames_page(mz, status, cursor, limit))

    @server.prompt(name="morphz_protocol")
    def morphz_protocol() -> str:
        """The Morphz model protocol: how to read the context and write transactions."""
        try:
            mz = current_client.get()
        except LookupError:
            return offline_instructions()
        return str(tool_call(lambda: mz.protocol()["instructions"]))

    @server.resource(
        "morphz://context/active",
        name="active-context",
        description="The compiled active context (a continuation: claims no inputs).",
        mime_type="text/plain",
    )
    def active_resource() -> str:
        """The compiled active context as prompt text."""
        mz = request_client()
        try:
            return str(tool_call(lambda: prompt_text(mz.evaluate(continuation=True))))
        except ToolError as exc:  # a resource reports its failure as a ResourceError
            raise ResourceError(str(exc)) from None

    from morphz_client.mcp_reference import add_reference_tools

    add_reference_tools(server)
    check_arguments(server)
    return server


class _OneLine(logging.Formatter):
    """`morphz-mcp: message` on one line; an exception as its type and text, its traceback
    only with -vv."""

    def __init__(self, tracebacks: bool) -> None:
        super().__init__("morphz-mcp: %(message)s")
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        """The record as one `morphz-mcp: ...` line (newlines folded to spaces), with the
        full traceback only when tracebacks were asked for."""
        if self.tracebacks:
            return super().format(record)
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text}: {type(exc).__name__}: {exc}"
        return "morphz-mcp: " + " ".join(text.split("\n"))


def _configure_logging(verbose: int) -> None:
    """Quiet by default: one line per failed call or warning on stderr. -v adds each
    request (INFO), -vv everything with tracebacks (DEBUG). Set before the SDK's own
    configuration, which then leaves it alone."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine(tracebacks=verbose >= 2))
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # The SDK reports each failed tool call at INFO: one line each, even when quiet.
    logging.getLogger("mcp.server.mcpserver.server").setLevel(min(level, logging.INFO))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="morphz-mcp",
        description="Morphz memory as an MCP server over stdio (the native tools and the "
        "reference server-memory tools). Configured by environment: MORPHZ_URL (default "
        "http://127.0.0.1:8000), MORPHZ_TOKEN (a context's API token, required), "
        "MORPHZ_CONTEXT (its slug, optional). See docs/agents.md.",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log more on stderr: -v each request, -vv everything with tracebacks "
        "(default: one line per failed call)",
    )
    parser.add_argument("--version", action="version", version=f"morphz-mcp {server_version()}")
    return parser


def main(argv: list[str] | None = None) -> None:
    """The `morphz-mcp` command: the MCP server over stdio for one Morphz context
    (MORPHZ_URL, MORPHZ_TOKEN, MORPHZ_CONTEXT). `--help` and `--version` answer and exit 0;
    a missing token exits 2 with one line."""
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose)
    token = os.environ.get("MORPHZ_TOKEN")
    if not token:
        print("morphz-mcp: set MORPHZ_TOKEN to a context's API token", file=sys.stderr)
        raise SystemExit(2)
    url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
    try:
        client = MorphzClient(url, token, context=os.environ.get("MORPHZ_CONTEXT") or None)
    except MorphzError as exc:
        # A server that answered (a wrong token, an unknown context) was reached: say so.
        if isinstance(exc, MorphzAPIError):
            print(f"morphz-mcp: Morphz at {url} answered {exc}", file=sys.stderr)
        else:
            print(f"morphz-mcp: cannot reach Morphz at {url}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    current_client.set(client)
    anyio.run(serve_stdio, build_server())


if __name__ == "__main__":
    main()
