"""What Morphz stores. Rules live in the `memory` service modules; these classes only store.

Every write goes through one function per verb in `memory.tx.engine`, `memory.timeline.events`,
`memory.timeline.evaluation`, `memory.contexts` and `memory.search.indexer`; nothing else sets these fields.

Split by concept: `contexts` (Context, ApiToken), `timeline` (Evaluation, Event,
TransactionRecord), `cognitive` (Frame, FrameRevision, Relation, RetirementRequest),
`search` (IndexIntent, SearchDocument, SearchPart), `changes` (the status and settings change logs).
"""

from memory.models.changes import EventChange, FrameChange, MaintenanceChange, SettingsChange
from memory.models.cognitive import Frame, FrameRevision, Relation, RetirementRequest
from memory.models.contexts import ApiToken, Context, ForkReceipt
from memory.models.erasure import Erasure
from memory.models.search import IndexIntent, SearchDocument, SearchPart
from memory.models.timeline import Evaluation, Event, TransactionRecord

__all__ = [
    "ApiToken",
    "Context",
    "Erasure",
    "Evaluation",
    "Event",
    "EventChange",
    "ForkReceipt",
    "Frame",
    "FrameChange",
    "FrameRevision",
    "IndexIntent",
    "MaintenanceChange",
    "Relation",
    "RetirementRequest",
    "SearchDocument",
    "SearchPart",
    "SettingsChange",
    "TransactionRecord",
]
