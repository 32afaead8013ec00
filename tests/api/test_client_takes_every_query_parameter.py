"""Every query parameter a read endpoint declares (its `...Query` model in memory/requests)
is a keyword of the client method that reads it, under the same name, so nothing the REST
API offers is out of a client user's reach. The models are found, not listed: a new one
must be paired here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from morphz_client.client import MorphzClient
from pydantic import BaseModel

import memory.requests
from memory.requests import contexts, events, frames

# client method -> the query model of the endpoint it reads.
READS: dict[str, type[BaseModel]] = {
    "events": events.EventListQuery,
    "read_event": events.EventChunkQuery,
    "evaluations": events.EvaluationListQuery,
    "frames": frames.FrameListQuery,
    "frame": frames.FrameDetailQuery,
    "relations": frames.RelationListQuery,
    "search": frames.SearchQuery,
    "transactions": frames.TransactionListQuery,
    "diff": contexts.DiffQuery,
}
# A replica's read floor: the client talks to the primary, which never needs one.
NOT_SENT = {"min_version"}
RENAMED = {"from": "from_version", "to": "to_version"}
# Query models of no client read: the read floor itself.
UNPAIRED = {contexts.ReadFloorQuery}


def _query_models() -> set[type[BaseModel]]:
    found = set()
    for info in pkgutil.iter_modules(memory.requests.__path__):
        module = importlib.import_module(f"memory.requests.{info.name}")
        for value in vars(module).values():
            declared_here = getattr(value, "__module__", None) == module.__name__
            if isinstance(value, type) and issubclass(value, BaseModel) and declared_here:
                found |= {value} if value.__name__.endswith("Query") else set()
    return found


def test_every_query_model_is_read_by_a_client_method() -> None:
    assert _query_models() == set(READS.values()) | UNPAIRED


def test_every_query_parameter_is_a_client_keyword() -> None:
    missing = {}
    for method, model in READS.items():
        keywords = set(inspect.signature(getattr(MorphzClient, method)).parameters)
        names = {field.alias or name for name, field in model.model_fields.items()}
        # `diff`'s `from` is a Python keyword: the client says `from_version`, `to_version`.
        names = {RENAMED.get(n, n) for n in names}
        left = sorted(names - keywords - NOT_SENT)
        if left:
            missing[method] = left
    assert missing == {}
