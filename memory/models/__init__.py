"""What Morphz stores. Rules live in the `memory` service modules; these classes only store.

How it works: docs/internals.md, section `memory/models/__init__.py`."""

from memory.models.changes import EventChange, FrameChange, MaintenanceChange, SettingsChange
from memory.models.cognitive import Frame, FrameRevision, Relation, RetirementRequest
from memory.models.contexts import ApiToken, Context, ForkReceipt
from memory.models.erasure import Erasure
from memory.models.search import IndexIntent, SearchDocument, SearchLanguage, SearchPart
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
    "SearchLanguage",
    "SearchPart",
    "SettingsChange",
    "TransactionRecord",
]
