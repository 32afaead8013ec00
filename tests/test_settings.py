"""Settings come from the environment; wrong values stop the process with a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from morphz.config import ConfigError, parse_database_url

ROOT = Path(__file__).resolve().parent.parent


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("mysql://root@localhost/db", "must start with postgres://"),
        ("postgres://localhost", "names no database"),
        ("postgres://localhost:notaport/db", "bad port"),
    ],
)
def test_malformed_database_url_is_refused(url, fragment):
    with pytest.raises(ConfigError, match=fragment):
        parse_database_url(url)


def test_database_url_with_socket_host():
    config = parse_database_url("postgresql://me:s%40cret@/morphz?host=/var/run/postgresql")
    assert (config.user, config.password, config.host, config.name) == (
        "me",
        "s@cret",
        "/var/run/postgresql",
        "morphz",
    )


def test_non_numeric_port_stops_manage_py_with_message():
    result = manage("check", env={"PORT": "eighty", "DATABASE_URL": "postgres://localhost/x"})
    assert result.returncode != 0
    assert "PORT must be an integer, got 'eighty'" in result.stderr


def test_bad_database_url_stops_manage_py_with_message():
    result = manage("check", env={"DATABASE_URL": "mysql://root@localhost/db"})
    assert result.returncode != 0
    assert "DATABASE_URL must start with postgres://" in result.stderr


def test_bad_channel_layer_url_stops_manage_py():
    result = manage(
        "check", env={"CHANNEL_LAYER_URL": "amqp://x", "DATABASE_URL": "postgres://localhost/x"}
    )
    assert result.returncode != 0
    assert "CHANNEL_LAYER_URL must be a redis:// URL" in result.stderr


@pytest.mark.parametrize("rate", ["abc", "10/fortnight", "0/min", "/min", "10"])
def test_bad_throttle_rate_stops_manage_py_with_message(rate):
    result = manage(
        "check", env={"MORPHZ_THROTTLE_RATE": rate, "DATABASE_URL": "postgres://localhost/x"}
    )
    assert result.returncode != 0
    assert "MORPHZ_THROTTLE_RATE must be <count>/<second|minute|hour|day>" in result.stderr
    assert repr(rate) in result.stderr


def test_bad_log_level_stops_manage_py_with_message():
    result = manage("check", env={"LOG_LEVEL": "bogus", "DATABASE_URL": "postgres://localhost/x"})
    assert result.returncode != 0
    assert "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'bogus'" in (
        result.stderr
    )


@pytest.mark.parametrize("rate", ["10/sec", "6000/min", "5/hours", "100/day"])
def test_good_throttle_rates_are_accepted(rate):
    result = manage(
        "check",
        env={
            "MORPHZ_THROTTLE_RATE": rate,
            "LOG_LEVEL": "warning",
            "DATABASE_URL": "postgres://localhost/x",
        },
    )
    assert result.returncode == 0, result.stderr


def test_prepared_statements_can_be_turned_off_for_a_pooler():
    config = parse_database_url("postgresql://me@localhost/morphz")
    assert config.django_settings()["OPTIONS"]["prepare_threshold"] > 10**9  # only when asked
    assert config.django_settings(prepared=False)["OPTIONS"]["prepare_threshold"] is None


def test_a_bad_prepared_statements_switch_stops_manage_py():
    done = manage("check", env={"MORPHZ_DB_PREPARED_STATEMENTS": "sometimes"})
    assert done.returncode != 0
    assert "MORPHZ_DB_PREPARED_STATEMENTS" in done.stderr


def test_allowed_hosts_naming_nothing_stops_manage_py_and_blank_is_the_default(monkeypatch):
    refused = manage(
        "check", env={"ALLOWED_HOSTS": " , ,", "DATABASE_URL": "postgres://localhost/x"}
    )
    assert refused.returncode != 0
    assert "ALLOWED_HOSTS must name at least one host" in refused.stderr

    from morphz.config import env_names

    monkeypatch.setenv("ALLOWED_HOSTS", " ")
    assert env_names("ALLOWED_HOSTS", "a,b") == ["a", "b"]  # blank: as unset
