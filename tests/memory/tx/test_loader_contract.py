"""The in-memory loader the rule tests use answers as `SqlLoader` does (the `StateLoader`
contract, memory.tx.apply): the same history applied to each, in memory and committed,
leaves the same frames and the same live `supersedes` relations, so a rule test that
passes in memory says what the engine does."""

from __future__ import annotations

import copy

import pytest

from memory.contexts import create_context
from memory.models import Context
from memory.tx.apply import TransactionApplier, referenced_items
from memory.tx.engine import submit_transaction
from memory.tx.lang import parse_text
from memory.tx.loader import SqlLoader
from tests.memory.tx.memory_loader import MemoryLoader

HISTORY = [
    "(context-tx (derive home-berlin (city Berlin)) (derive plan (goal ship))"
    " (derive notes (n 1)))",
    "(context-tx (derive home-munich (city Munich)) (relate home-munich supersedes home-berlin)"
    " (revise plan (goal ship-v2)))",
    "(context-tx (derive home-paris (city Paris)) (relate home-paris supersedes home-berlin))",
    "(context-tx (unrelate home-paris supersedes home-berlin) (protect plan) (retire notes))",
]
ASKED = {"home-berlin", "home-munich", "home-paris", "plan", "notes", "never-made"}


def in_memory(texts: list[str], tick: int, grace: int) -> MemoryLoader:
    """Each transaction applied by the rules alone, each outcome kept in the loader."""
    loader = MemoryLoader()
    for version, text in enumerate(texts, start=1):
        ops = parse_text(text)["ops"]
        frame_ids, _, keys = referenced_items(ops)
        outcome = TransactionApplier(
            loader,
            tick=tick,
            grace_ticks=grace,
            new_version=version,
            reason="",
            frames=copy.deepcopy(loader.frames(frame_ids)),
            events={},
            relations={
                k: copy.deepcopy(loader.relations[k]) for k in keys if k in loader.relations
            },
        ).apply(ops)
        assert outcome.errors == []
        loader.keep(outcome.frames, outcome.relations)
    return loader


def seen(loader: SqlLoader | MemoryLoader) -> tuple[dict[str, tuple], list[tuple[str, str]]]:
    """What a rule can read: each asked frame's state, and who supersedes what."""
    frames = {
        frame_id: (f.revision, f.body, f.sources, f.status, f.protected, f.retire_due_tick)
        for frame_id, f in loader.frames(ASKED).items()
    }
    supersedes = sorted((k.subject, k.object) for k in loader.supersedes_into(ASKED))
    return frames, supersedes


@pytest.mark.parametrize("grace", [0, 3])
def test_memory_loader_answers_as_the_sql_loader(db, grace):
    context = create_context(f"loader-contract-{grace}", grace_ticks=grace)
    for text in HISTORY:
        submit_transaction(context.pk, text=text)
    context = Context.objects.get(pk=context.pk)

    database = seen(SqlLoader(context.pk))
    memory = seen(in_memory(HISTORY, context.tick, grace))

    assert memory == database
    frames, supersedes = database
    assert set(frames) == ASKED - {"never-made"}
    assert supersedes == [("home-munich", "home-berlin")]
    assert frames["notes"][3] == ("retiring" if grace else "retired")
