"""`manage.py load_demo` loads the two worked examples of docs/design.md once (R42)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from memory.demo.story import FIRST_EXAMPLE, INDUCTION_EXAMPLE
from memory.models import Context, Event, Frame, Relation, TransactionRecord
from memory.tx.lang import parse_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MORPHZ_DATA_DIR", str(tmp_path))
    return tmp_path


def test_load_demo_builds_both_examples_exactly(data_dir: Path, capsys: Any) -> None:
    call_command("load_demo")
    out = capsys.readouterr().out
    password = (data_dir / "demo_password").read_text().strip()
    assert f"as demo / {password}" in out and "API token" in out
    user = get_user_model().objects.get(username="demo")
    assert user.is_staff and user.check_password(password)

    context = Context.objects.get(slug="demo")
    log = Event.objects.get(context=context, seq=42)
    assert log.kind == "tool_result" and log.content.count("\n") > 1000 and not log.active
    first = TransactionRecord.objects.get(context=context, committed_version=13)
    assert first.text == FIRST_EXAMPLE and first.base_version == 12
    induction = TransactionRecord.objects.get(context=context, committed_version=43)
    # Stored in canonical form; the same transaction as docs/design.md's text.
    assert parse_text(induction.text) == parse_text(INDUCTION_EXAMPLE)
    assert induction.base_version == 42

    frames = {f.frame_id: f for f in Frame.objects.filter(context=context)}
    assert frames["test-result"].sources == ["@e42"]
    assert frames["release"].body["stage"] == "packaged"
    assert frames["release-procedure"].sources == ["release-case-a", "release-case-b"]
    for case in ("release-case-a", "release-case-b"):
        assert frames[case].status == "retired"
        assert all(ref.startswith("@e") for ref in frames[case].sources)
        assert Relation.objects.filter(
            subject__frame_id="release-procedure", name="supersedes", object__frame_id=case
        ).exists()
    retiring = frames["changelog-draft"]
    assert retiring.status == "retiring" and retiring.retire_due_tick is not None
    assert 0 < retiring.retire_due_tick - context.tick < 8
    assert frames["user-preferences"].protected


def test_load_demo_twice_changes_nothing_and_prints_the_login(data_dir: Path, capsys: Any) -> None:
    call_command("load_demo")
    version = Context.objects.get(slug="demo").version
    capsys.readouterr()
    call_command("load_demo")
    out = capsys.readouterr().out
    password = (data_dir / "demo_password").read_text().strip()
    assert "already exists" in out and f"as demo / {password}" in out
    assert "API token" not in out
    assert Context.objects.get(slug="demo").version == version
    assert Context.objects.count() == 1
