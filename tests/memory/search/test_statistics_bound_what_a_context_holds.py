"""What the statistics prove a context holds (`statistics.held_at_least`): a lexeme's share
of the rows ANALYZE saw, less every row changed since (each may have taken it away) and
every row of the table outside the context (each may be one holding it). Below, a table
of 1,000 rows analysed, half of them holding the lexeme."""

from __future__ import annotations

from memory.search.statistics import held_at_least


def test_a_context_that_is_the_whole_table_holds_the_lexemes_share() -> None:
    assert held_at_least(0.5, 1000, 0, 1000, 1000) == 500


def test_every_row_outside_the_context_counts_against_it() -> None:
    assert held_at_least(0.5, 1000, 0, 1000, 400) == 500 - 600


def test_every_row_changed_since_analyze_counts_against_it() -> None:
    # 1,000 rows loaded into a new context since: the share says nothing of them.
    assert held_at_least(0.5, 1000, 1000, 2000, 1000) == 500 - 1000 - 1000


def test_the_table_is_never_taken_as_smaller_than_analyze_saw() -> None:
    # The activity count lagging behind (0 live rows) does not shrink what is outside.
    assert held_at_least(0.5, 1000, 0, 0, 400) == 500 - 600
