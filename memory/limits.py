"""The sizes and counts Morphz accepts, defined once for the domain and the API.

The request models (`memory.requests`) use these same names, so a limit shows up
identically in a 400's details, in the OpenAPI schema and in the domain's own checks.
Name lengths (frame ids, relation names, threads) live in `memory.vocabulary`.
"""

from __future__ import annotations

from typing import Final

# Events
MAX_CONTENT_CHARS: Final = 4_000_000  # an event's text, in characters
EVENT_PREVIEW_CHARS: Final = 200  # the `preview` of an event in lists and the compiled context
MAX_DELIVERS: Final = 1000  # refs one event may deliver
MAX_BULK_EVENTS: Final = 1000  # events in one bulk append
CHUNK_DEFAULT: Final = 65_536  # characters of an event's text per chunk read
CHUNK_MAX: Final = 1_048_576

MAX_CANCEL_REASON_CHARS: Final = 1000  # why a pending action is cancelled

# Transactions
MAX_OPS: Final = 500  # operations in one transaction

# Frames and their history
INLINE_CHARS: Final = 16_384  # a body or transaction text longer than this is left out of a page
HISTORY_PAGE: Final = 20  # revisions per page of a frame's history, by default
MAX_HISTORY_PAGE: Final = 100

# Pages
CURSOR_MAX_CHARS: Final = 500  # a page cursor as a client sends it back

# Model replies
MAX_REPLY_TEXT_CHARS: Final = 1_000_000  # a reply's text
MAX_TOOL_CALLS: Final = 64  # tool calls in one reply
MAX_TOOL_NAME_CHARS: Final = 200  # a tool's name, and a tool call's id
MAX_AGENT_TOOLS: Final = 128  # the agent's own tool names a reply may list

# Recall
RECALL_DEFAULT_DEPTH: Final = 1
RECALL_MAX_DEPTH: Final = 4
RECALL_DEFAULT_NODES: Final = 32
RECALL_MAX_NODES: Final = 128

# Search
SEARCH_MAX_QUERY_CHARS: Final = 1000
SEARCH_DEFAULT_LIMIT: Final = 20
SEARCH_MAX_LIMIT: Final = 100

# Erasure
MAX_ERASURE_ITEMS: Final = 100  # refs, spans and patterns in one erasure
MAX_ERASURE_REASON_CHARS: Final = 2000
MIN_ERASURE_PATTERN_CHARS: Final = 4
MAX_ERASURE_PATTERN_CHARS: Final = 1000
