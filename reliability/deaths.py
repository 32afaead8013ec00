"""Process deaths (RELIABILITY.md): SIGKILL each process Morphz runs, once per `--rounds`,
and check that it recovers by itself with nothing lost or left behind.

    .venv/bin/python -m reliability.deaths [--rounds 3] [--events 3000]

- indexer: killed under `manage.py serve`; restarted by the supervisor, `lag.indexer`
  counts the restart, and an event appended after the kill becomes searchable;
- server: `serve` killed; its indexer must be gone within 10 s (no orphan);
- import: `import_context` of a context of `--events` events killed mid-way; its scratch
  context is never listed, the next `serve` start removes it, a new import succeeds;
- export: an export over a good export killed mid-way; the good file is unchanged and the
  next export leaves no temporary file;
- fork: the server killed while a fork under an idempotency key is in flight; the retry
  after the restart gets one fork whose token works.
Exits non-zero when a case does not recover.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from reliability.clients import load
from reliability.stack import REPO, Stack, exit_on_sigterm


class Served:
    """`manage.py serve` (server + supervised indexer) on the stack's database."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**self.stack.env, "HOST": "127.0.0.1", "PORT": str(self.stack.port)}
        log = open(self.stack.root / "serve.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve"],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.stack.base}/api/v1/", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("serve did not start")

    def indexer_pid(self) -> int | None:
        assert self.proc is not None
        for child in psutil.Process(self.proc.pid).children():
            if "run_indexer" in " ".join(child.cmdline()):
                return child.pid
        return None

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)  # the server only, not its process group
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_for(check: Any, seconds: float, every: float = 0.05) -> float | None:
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if check():
            return round(time.monotonic() - began, 1)
        time.sleep(every)
    return None


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def scratch_count(stack: Stack) -> int:
    with stack.connect() as db:
        row = db.execute("SELECT count(*) FROM memory_context WHERE scratch").fetchone()
        return int(row[0]) if row else 0


def indexer_case(stack: Stack, served: Served, http: httpx.Client, n: int) -> dict[str, Any]:
    pid = served.indexer_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    word = f"zebrawood{n}x"
    http.post("events/", json={"kind": "tool_result", "content": f"{word} failed"})

    def found() -> bool:
        answer = http.get("search/", params={"q": word}).json()
        return bool(answer.get("hits"))

    seconds = wait_for(found, 120)
    lag = http.get("search/", params={"q": word}).json().get("lag", {})
    new = served.indexer_pid()
    return {
        "searchable_after_s": seconds,
        "restarted": new is not None and new != pid,
        "lag_indexer": lag.get("indexer"),
    }


def server_case(served: Served) -> dict[str, Any]:
    pid = served.indexer_pid()
    assert pid is not None
    served.kill()
    gone = wait_for(lambda: not alive(pid), 10)
    return {"indexer_gone_after_s": gone}


def import_case(stack: Stack, served: Served, export: Path, n: int) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "import_context", str(export), "--slug", f"imp-{n}"],
        cwd=REPO,
        env=stack.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    appeared = wait_for(lambda: scratch_count(stack) > 0, 120)
    mid_way = proc.poll() is None
    proc.kill()
    proc.wait()
    left = scratch_count(stack)
    listed = staff_list_has_scratch(stack)
    served.start()  # the next start removes it
    removed = wait_for(lambda: scratch_count(stack) == 0, 30)
    again = subprocess.run(
        [sys.executable, "manage.py", "import_context", str(export), "--slug", f"imp-{n}"],
        cwd=REPO,
        env=stack.env,
        capture_output=True,
        text=True,
    )
    return {
        "killed_mid_way": mid_way,
        "scratch_seen_after_s": appeared,
        "scratch_left_by_kill": left,
        "scratch_listed": listed,
        "removed_at_start_after_s": removed,
        "import_again_ok": again.returncode == 0,
    }


def staff_list_has_scratch(stack: Stack) -> bool:
    """Whether the contexts a person sees include a scratch one (read as the list does)."""
    out = stack.manage(
        "shell",
        "-c",
        "from memory.read.access import contexts_for_person as f\n"
        "class S: is_authenticated = is_active = is_staff = True\n"
        "print(any(c.scratch for c in f(S())))",
    )
    return out.strip().endswith("True")


def export_case(stack: Stack, path: Path, n: int) -> dict[str, Any]:
    good = hashlib.sha256(path.read_bytes()).hexdigest()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "export_context", "big", str(path), "--quiet"],
        cwd=REPO,
        env=stack.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: any(path.parent.glob(f".{path.name}.*.partial")), 120)
    mid_way = proc.poll() is None
    proc.kill()
    proc.wait()
    unchanged = hashlib.sha256(path.read_bytes()).hexdigest() == good
    stack.manage("export_context", "big", str(path), "--quiet")
    leftovers = [p.name for p in path.parent.glob(f".{path.name}.*")]
    return {
        "killed_mid_way": mid_way,
        "previous_export_unchanged": unchanged,
        "files_left_after_next_export": leftovers,
    }


def fork_case(stack: Stack, served: Served, token: str, n: int) -> dict[str, Any]:
    key = f"fork-death-{n}"
    body = {"slug": f"big-fork-{n}", "idempotency_key": key}
    http = httpx.Client(
        base_url=f"{stack.base}/api/v1/contexts/big/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    outcome: dict[str, Any] = {}

    def first() -> None:
        try:
            outcome["first"] = http.post("forks/", json=body).status_code
        except httpx.HTTPError as exc:
            outcome["first"] = type(exc).__name__

    thread = threading.Thread(target=first)
    thread.start()
    time.sleep(0.3)
    served.kill()
    thread.join()
    served.start()
    retry = http.post("forks/", json=body)
    with stack.connect() as db:
        row = db.execute(
            "SELECT count(*) FROM memory_context WHERE slug = %s", [body["slug"]]
        ).fetchone()
    forks = int(row[0]) if row else 0
    works = False
    if retry.status_code == 201:
        fork_token = retry.json()["token"]
        works = (
            httpx.get(
                f"{stack.base}/api/v1/contexts/{body['slug']}/",
                headers={"Authorization": f"Bearer {fork_token}"},
            ).status_code
            == 200
        )
    return {
        "first_answer": outcome.get("first"),
        "retry_status": retry.status_code,
        "forks": forks,
        "token_works": works,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=3000)
    args = parser.parse_args()
    exit_on_sigterm()
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    stack = Stack()
    stack.pg.init()
    stack.pg.start()
    served = Served(stack)
    cases: dict[str, list[dict[str, Any]]] = {
        k: [] for k in ("indexer", "server", "import", "export", "fork")
    }
    try:
        stack.manage("migrate", "--noinput")
        token = stack.create_context("big", "--capacity-tokens", "100000000")
        served.start()
        http = httpx.Client(
            base_url=f"{stack.base}/api/v1/contexts/big/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        for start in range(0, args.events, 500):
            items = [
                {"kind": "tool_result", "content": f"line {i} of a long log"}
                for i in range(start, min(start + 500, args.events))
            ]
            http.post("events/", json={"events": items}).raise_for_status()
        export = stack.root / "big.jsonl.gz"
        stack.manage("export_context", "big", str(export), "--quiet")
        for n in range(args.rounds):
            cases["indexer"].append(indexer_case(stack, served, http, n))
            cases["server"].append(server_case(served))
            cases["import"].append(import_case(stack, served, export, n))
            cases["export"].append(export_case(stack, export, n))
            cases["fork"].append(fork_case(stack, served, token, n))
    finally:
        served.stop()
        stack.down()
    result = {"date": began, "load": load(), "rounds": args.rounds, "events": args.events, **cases}
    print(json.dumps(result, indent=2))
    ok = (
        all(c["searchable_after_s"] is not None and c["restarted"] for c in cases["indexer"])
        and all(c["indexer_gone_after_s"] is not None for c in cases["server"])
        and all(
            c["removed_at_start_after_s"] is not None
            and (c["import_again_ok"] or not c["killed_mid_way"])
            and not c["scratch_listed"]
            for c in cases["import"]
        )
        and all(
            (c["previous_export_unchanged"] or not c["killed_mid_way"])
            and not c["files_left_after_next_export"]
            for c in cases["export"]
        )
        and all(
            c["retry_status"] == 201 and c["forks"] == 1 and c["token_works"] for c in cases["fork"]
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
