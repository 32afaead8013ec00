"""Django admin (R41): contexts and tokens managed; events, frames, transactions read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from memory.contexts import create_context
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


@pytest.fixture
def admin_client_with_data(client, db):
    User.objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    context = create_context("ops")
    append_event(context.pk, kind="tool_result", content="log")
    submit_transaction(context.pk, text="(context-tx (derive a (x y)))")
    return client


@pytest.mark.parametrize(
    "model", ["context", "apitoken", "event", "frame", "relation", "transactionrecord"]
)
def test_superuser_sees_the_lists(admin_client_with_data, model):
    response = admin_client_with_data.get(f"/admin/memory/{model}/")
    assert response.status_code == 200


@pytest.mark.parametrize("model", ["event", "frame", "transactionrecord"])
def test_history_has_no_add_or_change_form(admin_client_with_data, model):
    assert admin_client_with_data.get(f"/admin/memory/{model}/add/").status_code == 403
    from memory.models import Event, Frame, TransactionRecord

    obj = {"event": Event, "frame": Frame, "transactionrecord": TransactionRecord}[
        model
    ].objects.first()
    page = admin_client_with_data.get(f"/admin/memory/{model}/{obj.pk}/change/")
    assert page.status_code == 200  # view-only page
    assert b'name="_save"' not in page.content


def test_context_add_goes_through_memory_and_validates(admin_client_with_data):
    response = admin_client_with_data.post(
        "/admin/memory/context/add/",
        {
            "slug": "new-ctx",
            "name": "New",
            "grace_ticks": 8,
            "capacity_tokens": 1000,
            "pressure_percent": 95,
            "maintenance_percent": 90,
            "maintenance_exit_percent": 80,
        },
    )
    assert response.status_code == 200
    assert b"need 0 &lt; pressure_percent &lt;= maintenance_percent" in response.content
    from memory.models import Context

    assert not Context.objects.filter(slug="new-ctx").exists()


def test_admin_can_delete_a_context_with_its_history(admin_client_with_data):
    from memory.models import Context, Event, Frame

    context = Context.objects.get(slug="ops")
    response = admin_client_with_data.post(
        f"/admin/memory/context/{context.pk}/delete/", {"post": "yes"}
    )
    assert response.status_code == 302
    assert not Context.objects.filter(slug="ops").exists()
    assert not Event.objects.exists() and not Frame.objects.exists()
