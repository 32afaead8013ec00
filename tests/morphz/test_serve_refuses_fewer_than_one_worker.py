"""`serve --workers` below 1 is refused, 0 as well as -2 (0 used to mean the default)."""

from __future__ import annotations

import io

import pytest
from django.core.management.base import CommandError

from morphz.server import default_workers, workers_for


@pytest.mark.parametrize("asked", [0, -2])
def test_fewer_than_one_worker_is_refused(asked: int) -> None:
    with pytest.raises(CommandError, match="at least 1"):
        workers_for(asked, io.StringIO())


def test_no_number_is_the_default() -> None:
    assert workers_for(None, io.StringIO()) == default_workers()
