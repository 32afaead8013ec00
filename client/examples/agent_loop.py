"""One turn of an agent loop against the demo context (shown in the README).

Run with the server up (`./dev run`) and the demo token it printed:
    MORPHZ_TOKEN=mz_... python client/examples/agent_loop.py
"""

import os

from morphz_client import ConflictError, MorphzClient

url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
with MorphzClient(url, os.environ["MORPHZ_TOKEN"], context="demo") as mz:
    # 1. A tool ran: its output enters the history as an observation.
    obs = mz.append_event("tool_result", "smoke test on staging: 12/12 checks passed")

    # 2. Evaluate: claim pending inputs, get the active context to put in the prompt.
    view = mz.evaluate()
    print(f"tick {view['tick']}, version {view['view_version']}, claimed {view['claimed']}")

    # 3. The model digests the observation into a frame, linked to the release.
    frame_id = f"smoke-test-{obs['seq']}"
    try:
        receipt = mz.submit(
            f"(context-tx (base-version {view['view_version']})"
            f' (reason "staging smoke test absorbed")'
            f" (derive {frame_id} (from {obs['ref']}) (staging passed) (checks 12))"
            f" (relate {frame_id} supports release)"
            f" (retire {obs['ref']}))",
            evaluation=view["id"],
        )
    except ConflictError as exc:  # someone changed what we relied on: re-read and retry
        print("conflict:", exc.details)
        raise
    print(f"committed version {receipt['version']}, pressure {receipt['pressure']['level']}")

    # 4. Recall what supports the release, two steps out.
    graph = mz.recall("release", depth=2, direction="both")
    print("recall:", [node.get("id") or node.get("ref") for node in graph["nodes"]])

    # 5. Search the memory (the index may lag a moment behind the commit).
    hits = mz.search("release")
    print(f"search: {len(hits['hits'])} hits, lag {hits['lag']}")
