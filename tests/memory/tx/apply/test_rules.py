"""Transaction rules as plain Python, without a database (R10–R17, R20)."""

from __future__ import annotations

from memory.tx.apply import (
    EventState,
    FrameState,
    RelationKey,
    RelationState,
    TransactionApplier,
    find_conflicts,
    referenced_items,
)
from memory.tx.lang import parse_text
from tests.memory.tx.memory_loader import MemoryLoader


def frame(frame_id: str, status: str = "active", **kw) -> FrameState:
    values = dict(
        frame_id=frame_id,
        revision=1,
        body={"x": "y"},
        sources=[],
        status=status,
        protected=False,
        retire_requested_tick=None,
        retire_due_tick=None,
        retire_reason=None,
        retire_generation=0,
        token_estimate=10,
        created_version=1,
        changed_version=1,
        pk=hash(frame_id),
        original_status=status,
    )
    values.update(kw)
    return FrameState(**values)


def apply(text: str, frames=(), events=(), relations=(), loader=None, tick=100, grace=8):
    tx = parse_text(text)
    frames_by_id = {f.frame_id: f for f in frames}
    applier = TransactionApplier(
        loader or MemoryLoader(frames),
        tick=tick,
        grace_ticks=grace,
        new_version=10,
        reason=tx["reason"] or "",
        frames=frames_by_id,
        events={e.seq: e for e in events},
        relations={r.key: r for r in relations},
    )
    return applier.apply(tx["ops"])


def test_retire_opens_window_with_due_tick_from_grace():
    outcome = apply("(context-tx (retire note))", frames=[frame("note")])
    note = outcome.frames["note"]
    assert (note.status, note.retire_due_tick, note.retire_generation) == ("retiring", 108, 1)
    assert outcome.released_tokens == 0


def test_zero_grace_retires_immediately_and_releases():
    outcome = apply("(context-tx (retire note))", frames=[frame("note")], grace=0)
    assert outcome.frames["note"].status == "retired"
    assert outcome.released_tokens == 10


def test_later_operation_sees_earlier_one():
    outcome = apply(
        "(context-tx (restore note) (revise note (x z)))", frames=[frame("note", status="retired")]
    )
    assert outcome.errors == []
    assert (outcome.frames["note"].status, outcome.frames["note"].revision) == ("active", 2)


def test_derive_with_unknown_source_fails_with_index():
    outcome = apply("(context-tx (derive a (x y)) (derive b (from ghost) (x y)))")
    assert [(e.index, e.code, e.ref) for e in outcome.errors] == [(1, "unknown_ref", "ghost")]


def test_a_frame_citing_itself_has_its_own_code():
    derived = apply("(context-tx (derive a (from a) (x y)))")
    revised = apply("(context-tx (revise note (from note) (x z)))", frames=[frame("note")])
    for outcome, ref in ((derived, "a"), (revised, "note")):
        assert [(e.index, e.code, e.ref) for e in outcome.errors] == [(0, "self_citation", ref)]


def test_retire_of_open_request_is_request_pending():
    request = EventState(
        seq=7,
        kind="user_message",
        is_observation=True,
        active=True,
        request_state="open",
        token_estimate=5,
        status_version=0,
        pk=1,
    )
    outcome = apply("(context-tx (retire @e7))", events=[request])
    assert outcome.errors[0].code == "request_pending"


def test_successor_rule_uses_existing_supersedes_relation():
    old = frame(
        "case",
        status="retiring",
        retire_due_tick=108,
        retire_requested_tick=100,
        retire_generation=1,
    )
    key = RelationKey("method", "supersedes", "case")
    method = frame("method")
    loader = MemoryLoader([old, method], relations=[key])
    outcome = apply(
        "(context-tx (revise method (from case) (steps ok)))", frames=[method, old], loader=loader
    )
    assert outcome.errors == []
    assert outcome.completed_by_successor == ["case"]
    assert outcome.frames["case"].status == "retired"


def test_retired_successor_does_not_complete_retirement():
    old = frame(
        "case",
        status="retiring",
        retire_due_tick=108,
        retire_requested_tick=100,
        retire_generation=1,
    )
    successor = frame("method", status="retired", sources=["case"])
    key = RelationKey("method", "supersedes", "case")
    outcome = apply(
        "(context-tx (retire case))",
        frames=[old],
        loader=MemoryLoader([old, successor], relations=[key]),
    )
    assert outcome.completed_by_successor == []
    assert outcome.frames["case"].status == "retiring"


def test_referenced_items_cover_every_explicit_reference():
    tx = parse_text(
        "(context-tx (derive a (from @e3 b) (x y)) (relate a supports c) (retire @e4 d) (protect e))"
    )
    frames, seqs, relations = referenced_items(tx["ops"])
    assert frames == {"a", "b", "c", "d", "e"}
    assert seqs == {3, 4}
    assert relations == {RelationKey("a", "supports", "c")}


def test_conflicts_name_items_changed_after_base():
    changed = frame("release", revision=3, changed_version=12)
    same = frame("other", changed_version=5)
    relation = RelationState(RelationKey("a", "supports", "b"), live=False, changed_version=11)
    conflicts = find_conflicts(
        10, {"release": changed, "other": same}, {}, {relation.key: relation}
    )
    assert [(c.ref, c.kind, c.revision) for c in conflicts] == [
        ("release", "frame", 3),
        ("a supports b", "relation", None),
    ]
