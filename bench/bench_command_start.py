"""How long a README command takes, beside a bare `manage.py check`, in one run.

    .venv/bin/python bench/bench_command_start.py             # 5 rounds
    .venv/bin/python bench/bench_command_start.py --rounds 9

A fresh embedded data folder (MORPHZ_DATA_DIR in /tmp, migrated once, untimed) and the
project's interpreter with bytecode caches written (as on a person's machine). Each round
runs, interleaved, `manage.py check` (the baseline: Django's start, its system checks, the
embedded PostgreSQL started or joined), `create_token`, `create_context` and
`create_token` with Django's system checks forced back on (what every data command did
before DataCommand skipped them). Twice: "cold" (no server running: the command starts
PostgreSQL and stops it at exit, as after `./dev run` has stopped) and "warm" (this script
holds the embedded server, as `./dev run` does while it serves). Prints the median wall
time of each and its ratio to `check` of the same mode.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# Re-enables the system checks a DataCommand skips, then runs manage.py as usual.
WITH_CHECKS = (
    "import sys, runpy; sys.argv = ['manage.py', *sys.argv[1:]];"
    "from memory.management.data_command import DataCommand;"
    "DataCommand.requires_system_checks = '__all__';"
    "runpy.run_path('manage.py', run_name='__main__')"
)


def run(env: dict[str, str], args: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return elapsed


def measure(env: dict[str, str], rounds: int, mode: str) -> None:
    names = ["check", "create_token", "create_context", "create_token, checks on"]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for n in range(rounds):
        commands = {
            "check": [PYTHON, "manage.py", "check"],
            "create_token": [PYTHON, "manage.py", "create_token", "bench"],
            "create_context": [PYTHON, "manage.py", "create_context", f"bench-{mode}-{n}"],
            "create_token, checks on": [PYTHON, "-c", WITH_CHECKS, "create_token", "bench"],
        }
        for name in names:
            samples[name].append(run(env, commands[name]))
    base = statistics.median(samples["check"])
    for name in names:
        median = statistics.median(samples[name])
        print(f"{mode:5} {name:24} {median:6.2f} s   {median / base:5.2f}x check")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    data = tempfile.mkdtemp(prefix="mzcmd-", dir="/tmp")  # short: the socket lives in it
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL"}}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's machine keeps bytecode caches
    env.update(MORPHZ_DATA_DIR=data, LOG_LEVEL="WARNING")
    subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    run(env, [PYTHON, "manage.py", "create_context", "bench"])
    run(env, [PYTHON, "-c", WITH_CHECKS, "check"])  # bytecode written before timing
    print(f"load average {os.getloadavg()[0]:.1f}; {rounds} rounds; medians")
    measure(env, rounds, "cold")
    # Warm: this process holds the embedded server, as a running `./dev run` does.
    os.environ.update(MORPHZ_DATA_DIR=data)
    sys.path.insert(0, str(ROOT))
    from morphz.embedded_db import ensure_database, stop_database

    ensure_database()
    try:
        measure(env, rounds, "warm")
    finally:
        stop_database()


if __name__ == "__main__":
    main()
