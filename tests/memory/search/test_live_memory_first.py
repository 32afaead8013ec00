"""Live memory first (R60): for the same match, active frames rank above retiring, retired
and superseded ones, unless the query asks for a status; a superseded hit names its
successor. Each test is a case peers' users met."""

from __future__ import annotations

from memory.search.indexer import drain
from memory.search.query import search


def test_one_live_frame_outranks_thirty_retired_ones_about_the_same_thing(release_team):
    agent = release_team
    # The live frame is the oldest and says it once; the retired ones say it again.
    agent.commit(
        '(context-tx (derive auth-current (text "JWT tokens are signed with RS256 keys")))'
    )
    for n in range(30):
        agent.commit(f'(context-tx (derive auth-note-{n} (text "JWT tokens: old JWT tokens {n}")))')
    agent.commit("(context-tx (retire " + " ".join(f"auth-note-{n}" for n in range(30)) + "))")
    drain()
    hits = search(agent.context, "JWT tokens", limit=5)["hits"]
    assert hits[0]["id"] == "auth-current"
    assert {h["status"] for h in hits[1:]} == {"retiring"}
    # Asking for a status ranks among that status as before: no live frame in the way.
    retiring = search(agent.context, "JWT tokens", status="retiring", limit=5)["hits"]
    assert retiring and all(h["status"] == "retiring" for h in retiring)


def test_a_superseded_frame_ranks_below_its_successor_and_names_it(release_team):
    agent = release_team
    agent.commit(
        '(context-tx (derive home-berlin (text "the user lives in Berlin, a city in Germany")))'
    )
    agent.commit(
        '(context-tx (derive home-munich (text "moved: the user lives in the city of Munich now,'
        ' far from the old flat, with a long commute to work every day"))'
        " (relate home-munich supersedes home-berlin))"
    )
    drain()
    hits = search(agent.context, "which city does the user live in")["hits"]
    ids = [h["ref"] for h in hits]
    assert ids.index("home-munich") < ids.index("home-berlin")
    berlin = hits[ids.index("home-berlin")]
    assert berlin["superseded_by"] == ["home-munich"]
    assert "superseded_by" not in hits[ids.index("home-munich")]


def test_a_frame_whose_successor_is_retired_ranks_as_live_again(release_team):
    agent = release_team
    said = '(text "the database host is db1 in the rack")'
    agent.commit(f"(context-tx (derive host-a {said}) (derive host-b {said}))")
    agent.commit(
        '(context-tx (derive host-c (text "the database host is db2 in the rack"))'
        " (relate host-c supersedes host-a))"
    )
    # The successor was a mistake: retiring, it no longer replaces anything, so host-a is
    # live memory again, like its twin host-b, and names no successor.
    agent.commit("(context-tx (retire host-c))")
    drain()
    hits = {h["ref"]: h for h in search(agent.context, "rack")["hits"]}
    assert hits["host-a"]["score"] == hits["host-b"]["score"] > hits["host-c"]["score"]
    assert "superseded_by" not in hits["host-a"]
