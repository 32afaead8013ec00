"""Without DATABASE_URL the project runs its own PostgreSQL under MORPHZ_DATA_DIR."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def manage(data_dir: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["MORPHZ_DATA_DIR"] = data_dir
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_embedded_server_starts_migrates_and_reuses_its_data():
    with tempfile.TemporaryDirectory(prefix="mz-", dir="/tmp") as data_dir:
        migrated = manage(data_dir, "migrate", "--noinput")
        assert migrated.returncode == 0, migrated.stderr
        assert "Applying memory.0001_initial... OK" in migrated.stdout
        assert (Path(data_dir) / "pgdata" / "PG_VERSION").exists()

        created = manage(data_dir, "create_context", "alpha")
        assert created.returncode == 0, created.stderr

        # A second start finds the context written by the first: the data was reused.
        again = manage(data_dir, "create_token", "alpha")
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip().splitlines()[-1].startswith("mz_")
        migrated_again = manage(data_dir, "migrate", "--noinput")
        assert "No migrations to apply" in migrated_again.stdout
