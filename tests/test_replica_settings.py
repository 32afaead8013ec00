"""DATABASE_REPLICA_URLS (R68): each URL becomes a read alias; none by default; a replica
of the embedded server, or a malformed URL, stops the process naming the variable."""

from __future__ import annotations

import pytest

from morphz.config import ConfigError, replica_urls


def test_no_replicas_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_REPLICA_URLS", raising=False)
    assert replica_urls() == []


def test_replica_urls_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://db1/morphz")
    monkeypatch.setenv("DATABASE_REPLICA_URLS", " postgres://db2/morphz, ,postgres://db3/morphz")
    assert replica_urls() == ["postgres://db2/morphz", "postgres://db3/morphz"]


def test_replicas_of_the_embedded_server_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("DATABASE_REPLICA_URLS", "postgres://db2/morphz")
    with pytest.raises(ConfigError, match="DATABASE_REPLICA_URLS needs DATABASE_URL"):
        replica_urls()


def test_a_malformed_replica_url_names_its_variable() -> None:
    from morphz.config import parse_database_url

    with pytest.raises(ConfigError, match="DATABASE_REPLICA_URLS must start with postgres://"):
        parse_database_url("mysql://db2/x", "DATABASE_REPLICA_URLS")
