"""A frame's id counts each query word it holds once more (`ranking_sql.NAMED`). Its words
are split at the separators an id or event ref may hold (`vocabulary.FRAME_ID_RE`, `@`)
by `translate` (`ranking_sql.ID_WORDS`), with no regular expression over a Unicode class:
the same words as the `[^[:alnum:]]+` split it replaces."""

from __future__ import annotations

import random
from typing import Any

from django.db import connection

from memory.search.ranking_sql import ID_WORDS
from memory.vocabulary import FRAME_ID_RE

REFS = ["deploy-plan.v2", "a_b-c.d", "@e42", "x--y", "release..notes_", "q3", "0-day"]


def test_id_words_are_the_alnum_runs_of_every_id(db: Any) -> None:
    rng = random.Random(7)
    alphabet = "abcz019._-"
    refs = REFS + ["a" + "".join(rng.choice(alphabet) for _ in range(12)) for _ in range(200)]
    assert all(FRAME_ID_RE.fullmatch(ref) for ref in refs if not ref.startswith("@"))
    ours = ID_WORDS.replace("d.ref", "r.ref")
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT r.ref, array_remove({ours}, ''),
                       array_remove(regexp_split_to_array(lower(r.ref), '[^[:alnum:]]+'), '')
                FROM unnest(%s::text[]) AS r(ref)""",  # noqa: S608  (constants)
            [refs],
        )
        rows = cursor.fetchall()
    assert len(rows) == len(refs)
    for ref, split, expected in rows:
        assert split == expected, ref
