"""The closed vocabularies of Morphz (docs/concepts.md, docs/rest.md)."""

from __future__ import annotations

USER_MESSAGE = "user_message"
TOOL_RESULT = "tool_result"
AGENT_MESSAGE = "agent_message"
EXTERNAL_FACT = "external_fact"
ACTION = "action"
RECALL_RESULT = "recall_result"
TRANSACTION = "transaction"

EVENT_KINDS = (
    USER_MESSAGE,
    TOOL_RESULT,
    AGENT_MESSAGE,
    EXTERNAL_FACT,
    ACTION,
    RECALL_RESULT,
    TRANSACTION,
)
# Kinds a client may append; the others are written by the runtime.
APPENDABLE_KINDS = (USER_MESSAGE, TOOL_RESULT, AGENT_MESSAGE, EXTERNAL_FACT)
# Received input: active in the model input until retired (R2, R13).
OBSERVATION_KINDS = (USER_MESSAGE, TOOL_RESULT, EXTERNAL_FACT, RECALL_RESULT)
# Claiming a batch with one of these advances the tick (R22).
EXTERNAL_FACT_KINDS = (USER_MESSAGE, TOOL_RESULT, EXTERNAL_FACT)
# Events that wait for an evaluation to claim them (R21).
INPUT_KINDS = (USER_MESSAGE, TOOL_RESULT, AGENT_MESSAGE, EXTERNAL_FACT, RECALL_RESULT)

ACTIVE = "active"
RETIRING = "retiring"
RETIRED = "retired"
FRAME_STATUSES = (ACTIVE, RETIRING, RETIRED)
# An event's status: observations are active or retired; other kinds are plain history.
RECORDED = "recorded"
EVENT_STATUSES = (ACTIVE, RETIRED, RECORDED)


def event_status(is_observation: bool, active: bool) -> str:
    """The one way an event's `status` is shown: `active`, `retired` or `recorded`."""
    if not is_observation:
        return RECORDED
    return ACTIVE if active else RETIRED


REQUEST_OPEN = "open"
REQUEST_DELIVERED = "delivered"
REQUEST_STATES = (REQUEST_OPEN, REQUEST_DELIVERED)

COMMITTED = "committed"
REJECTED = "rejected"
TRANSACTION_STATUSES = (COMMITTED, REJECTED)

# A retirement request's outcome, moved only by memory.tx.retirement. pending: inside its
# window; expired: became retired at its due tick; completed: retired early by a successor
# (R17); cancelled: revise/restore/protect inside the window; stale: its expiry found a newer
# generation or revision (R16).
RETIREMENT_OUTCOMES = ("pending", "expired", "completed", "cancelled", "stale")

PRESSURE_OK = "ok"
PRESSURE = "pressure"
MAINTENANCE = "maintenance"


# What a token may do (R65, memory.scopes): read recalls, searches and reads; agent writes
# memory and replies (the default); erase reads and erases; admin does everything.
READ_SCOPE = "read"
AGENT_SCOPE = "agent"
ERASE_SCOPE = "erase"
ADMIN_SCOPE = "admin"
TOKEN_SCOPES = (READ_SCOPE, AGENT_SCOPE, ERASE_SCOPE, ADMIN_SCOPE)

# Screening on write (memory.screening): off (default), refuse, or store masked.
SCREENING_OFF = "off"
SCREENING_REFUSE = "refuse"
SCREENING_MASK = "mask"
SCREENING_MODES = (SCREENING_OFF, SCREENING_REFUSE, SCREENING_MASK)

# What an erasure tombstone stands for (memory.erasure).
ERASURE_TARGETS = ("event", "frame", "span", "pattern")
