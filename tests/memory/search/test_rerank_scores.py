"""How meaning reorders the head (memory.search.semantic.rerank), without a database."""

from __future__ import annotations

import numpy as np

from memory.search import semantic


def unit(*values: float) -> bytes:
    vector = np.zeros(semantic.DIMENSIONS, dtype=np.float32)
    vector[: len(values)] = values
    return (vector / np.linalg.norm(vector)).astype(np.float16).tobytes()


QUERY = unit(1.0, 0.0)


def test_a_document_about_the_query_moves_up_past_a_slightly_better_lexical_match():
    head = [(10.0, False, unit(0.0, 1.0)), (9.5, False, unit(1.0, 0.0))]
    assert [n for n, _ in semantic.rerank(head, QUERY, 0.01)] == [1, 0]


def test_meaning_never_lowers_a_score_so_later_pages_stay_below_the_head():
    head = [(10.0, False, unit(-1.0, 0.0)), (8.0, False, unit(1.0, 1.0)), (7.0, False, None)]
    scores = dict(semantic.rerank(head, QUERY, 0.01))
    assert scores[0] == 10.0  # opposite meaning: adds nothing, takes nothing
    assert scores[1] == 8.0 + semantic.WEIGHT * 10.0 * float(np.float16(2**-0.5))  # best 10
    assert scores[2] == 7.0  # no embedding: lexical score
    assert min(scores.values()) >= 7.0


def test_the_frame_named_by_the_query_stays_first_and_scores_above_the_rest():
    head = [(10.01, True, unit(0.0, 1.0)), (10.0, False, unit(1.0, 0.0))]
    order = semantic.rerank(head, QUERY, 0.01)
    assert order[0][0] == 0
    assert order[0][1] > order[1][1]


def test_ties_keep_the_lexical_order():
    same = unit(1.0, 1.0)
    head = [(5.0, False, same), (5.0, False, same), (5.0, False, same)]
    assert [n for n, _ in semantic.rerank(head, QUERY, 0.01)] == [0, 1, 2]


def test_text_with_nothing_to_embed_gets_no_embedding():
    blank, said = semantic.embeddings(["   ", "a parcel arrived broken"])
    assert blank == b""
    assert len(said) == semantic.DIMENSIONS * 2
    vector = np.frombuffer(said, dtype=np.float16).astype(np.float32)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-2


def test_a_querys_spacing_does_not_change_its_meaning():
    assert semantic.query_embedding("late  order\tairport ") == semantic.query_embedding(
        "late order airport"
    )
