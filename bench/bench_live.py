"""Live-update and first-render figures for the explorer (BENCHMARKS.md).

    .venv/bin/python bench/bench_live.py [--commits 200] [--frames 500]

Runs on a throwaway embedded PostgreSQL (a temporary MORPHZ_DATA_DIR), a real uvicorn
server in a subprocess and Debian's headless Chromium, all on this machine:

- commit -> websocket: for each of N sequential commits posted through the REST API, the
  time from the transaction's commit (its stored `created_at`, written inside the database
  transaction just before COMMIT, so the figure errs high by the commit itself) to the moment
  the page's websocket handler received the change (the page dispatches `morphz:change`;
  both clocks are this machine's wall clock). Also reported: from the POST being sent, and
  until the page has refetched and shows the new version.
- first render: navigation start to the end of the first graph layout
  (`performance.mark("morphz:first-render")`) for a context of F frames with relations
  and sources, median of 3 loads.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import percentile  # noqa: E402

from morphz.devserver import free_port, uvicorn_command  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name:<34} p50 {percentile(values, 50):7.1f} ms   p95 {percentile(values, 95):7.1f} ms"
        f"   max {max(values):7.1f} ms   (n={len(values)})"
    )


def build_context(frames: int) -> tuple[Any, str]:
    """A context with `frames` frames in a few transactions: each frame supports an earlier
    one, every tenth cites an event, so the graph has the shape of a real memory."""
    from memory.contexts import create_context, issue_token
    from memory.timeline.events import append_event
    from memory.tx.engine import Author, submit_transaction

    context = create_context("bench-live", name="bench: live updates")
    refs = [
        append_event(context.pk, kind="tool_result", content=f"log {i}\n" * 50).event.ref
        for i in range(frames // 10 + 1)
    ]
    agent = Author("bench", "agent")
    for start in range(0, frames, 100):
        ops: list[dict[str, Any]] = []
        for i in range(start, min(start + 100, frames)):
            ops.append(
                {
                    "op": "derive",
                    "id": f"f-{i:04d}",
                    "from": [refs[i // 10]] if i % 10 == 0 else [],
                    "body": {"summary": f"frame {i}", "detail": {"n": str(i), "tags": ["a", "b"]}},
                }
            )
        for i in range(max(start, 1), min(start + 100, frames)):
            ops.append(
                {
                    "op": "relate",
                    "subject": f"f-{i:04d}",
                    "name": "supports",
                    "object": f"f-{(i - 1) // 3:04d}",
                }
            )
        submit_transaction(context.pk, data={"reason": "bench", "ops": ops}, author=agent)
    return context, issue_token(context).raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--screenshot", help="save a picture of the large graph here")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="mzlive"))
    os.environ["MORPHZ_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "morphz.settings")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps
    os.environ.pop("DATABASE_URL", None)
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    from morphz.embedded_db import ensure_database, stop_database

    ensure_database()
    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    context, token = build_context(args.frames)
    get_user_model().objects.create_superuser("bench", "bench@example.invalid", "bench-pass")

    port = free_port()
    env = dict(os.environ, MORPHZ_INDEXER_IN_PROCESS="0")
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE")
    server = subprocess.Popen(uvicorn_command(port), cwd=REPO, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        import httpx
        from playwright.sync_api import sync_playwright

        for _ in range(300):
            try:
                if httpx.get(base + "/admin/login/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=os.environ.get("MORPHZ_CHROMIUM", "/usr/bin/chromium"),
                args=CHROMIUM_ARGS,
            )
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(base + "/admin/login/?next=/")
            page.fill("#id_username", "bench")
            page.fill("#id_password", "bench-pass")
            page.click("input[type=submit]")
            page.wait_for_url(base + "/")

            renders = []
            for _ in range(3):
                page.goto(f"{base}/contexts/{context.slug}/")
                page.wait_for_selector("#live-status[data-state=live]")
                renders.append(
                    page.evaluate(
                        "() => performance.getEntriesByName('morphz:first-render')[0].startTime"
                    )
                )
            nodes = page.evaluate("() => document.body.dataset.graphNodes")
            if args.screenshot:
                page.screenshot(path=args.screenshot)
            page.evaluate("""() => { window.received = {};
                document.addEventListener('morphz:change', (e) => {
                  if (e.detail.type === 'transaction')
                    window.received[e.detail.version] = performance.timeOrigin + performance.now();
                }); }""")

            client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"})
            sent: dict[int, float] = {}
            shown: list[float] = []
            for i in range(args.commits):
                frame = f"f-{(i * 7) % args.frames:04d}"
                t0 = time.time()
                response = client.post(
                    f"/api/v1/contexts/{context.slug}/transactions/",
                    json={
                        "ops": [{"op": "revise", "id": frame, "body": {"summary": f"revised {i}"}}],
                        "reason": "bench",
                    },
                )
                response.raise_for_status()
                version = response.json()["version"]
                sent[version] = t0
                page.wait_for_function("(v) => window.received[v] !== undefined", arg=version)
                page.wait_for_function(
                    "(v) => document.body.dataset.version >= String(v) && "
                    "Number(document.body.dataset.version) >= v",
                    arg=version,
                )
                shown.append((time.time() - t0) * 1000)
            received: dict[str, float] = page.evaluate("() => window.received")
            browser.close()

        from memory.models import TransactionRecord

        committed = {
            r.committed_version: r.created_at.timestamp()
            for r in TransactionRecord.objects.filter(context=context, committed_version__in=sent)
        }
        from_commit = [received[str(v)] - committed[v] * 1000 for v in sent]
        from_post = [received[str(v)] - sent[v] * 1000 for v in sent]
        print(
            f"explorer live updates: {args.commits} commits, {nodes} graph nodes, "
            f"Chromium headless, uvicorn 1 worker, in-memory channel layer"
        )
        print(summary("commit -> websocket in browser", from_commit))
        print(summary("POST sent -> websocket in browser", from_post))
        print(summary("POST sent -> page shows version", shown))
        print(
            f"first render of {args.frames} frames (median of 3): "
            f"{statistics.median(renders):.0f} ms  (runs: {', '.join(f'{r:.0f}' for r in renders)})"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
        from django.db import connections

        connections.close_all()
        stop_database()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
