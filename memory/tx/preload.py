"""Loads for every transaction of a group commit, sent together before any is decided.

How it works: docs/internals.md, section `memory/tx/preload.py`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory.contexts import send_token_check
from memory.tx.apply import ApplyOutcome, RelationKey, referenced_items
from memory.tx.loader import Loaded, SqlLoader


@dataclass(frozen=True)
class Names:
    """What a transaction names explicitly (`referenced_items`)."""

    frame_ids: set[str]
    seqs: set[int]
    relation_keys: set[RelationKey]

    @classmethod
    def of(cls, ops: list[dict]) -> Names:
        """The names in a transaction's operations (JSON form)."""
        return cls(*referenced_items(ops))


@dataclass
class _Sent:
    names: Names
    changes_before: int  # how many written transactions the load already saw
    read: Callable[[], Loaded]


class GroupLoads:
    """The loads of one group commit, valid or not, and its token checks, by transaction.

    Use under the context row lock, inside the group's open `pipeline()`; `key` is any
    object identifying a transaction for the life of the group (the engine's submission)."""

    def __init__(self, context_id: int) -> None:
        self.context_id = context_id
        self.loader = SqlLoader(context_id)
        self._sent: dict[int, _Sent] = {}
        self._changed: list[tuple[set[str], set[int]]] = []
        self._token_checks: dict[int, Callable[[], bool]] = {}

    def send(self, key: object, ops: list[dict], token_id: int | None = None) -> None:
        """Send the loads of the transaction `key` (its JSON-form `ops`) without waiting,
        and the check of its agent token (`token_id`): sent after the row lock, the check
        runs once the lock is granted and sees any revocation committed before."""
        if token_id is not None:
            self._token_checks[id(key)] = send_token_check(token_id, self.context_id)
        names = Names.of(ops)
        read = self.loader.send(names.frame_ids, names.seqs, names.relation_keys)
        self._sent[id(key)] = _Sent(names, len(self._changed), read)

    def token_live(self, key: object) -> bool:
        """Whether the token sent with `key` is live and belongs to the context."""
        return self._token_checks.pop(id(key))()

    def load(self, key: object, names: Names) -> Loaded:
        """What the transaction `key` names, as the group's writes so far left it: its sent
        load when nothing written since overlaps it, else a fresh load (one round trip)."""
        sent = self._sent.pop(id(key), None)
        if sent is not None:
            loaded = sent.read()  # read even when dropped: the results are waiting
            if not any(
                frames & names.frame_ids or seqs & names.seqs
                for frames, seqs in self._changed[sent.changes_before :]
            ):
                return loaded
        return self.loader.load(names.frame_ids, names.seqs, names.relation_keys)

    def wrote(self, outcome: ApplyOutcome, transaction_seq: int) -> None:
        """Record a written transaction: every frame it loaded or related and every event it
        loaded, and its own transaction event at `transaction_seq`."""
        frames = set(outcome.frames)
        for key in outcome.relations:
            frames.update((key.subject, key.object))
        self._changed.append((frames, set(outcome.events) | {transaction_seq}))
