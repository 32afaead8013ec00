"""Screening on write (R65): off by default; `refuse` names the field and writes nothing;
`mask` stores the text masked with a note. A real-looking cloud key and a Luhn-valid card."""

from __future__ import annotations

from typing import Any

from memory.contexts import set_screening
from memory.models import Context, Event, TransactionRecord
from memory.screening import findings, luhn
from tests.api.conftest import Api, error_of

CLOUD_KEY = "AKIAZ7QH3KX2M9TLW4PD"
CARD = "4111 1111 1111 1111"
NOT_A_CARD = "4111 1111 1111 1112"  # fails the Luhn check: an order number, say


def test_the_detectors_find_keys_and_only_luhn_valid_cards() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert [f.kind for f in findings(f"key {CLOUD_KEY} ok")] == ["AWS Access Key"]
    assert [f.value for f in findings(f"pay {CARD} or {NOT_A_CARD}")] == [CARD]


def test_off_by_default(api: Api, alpha: Context) -> None:
    assert api.get().json()["screening"] == "off"
    api.observe(f"card {CARD}")
    assert CARD in Event.objects.get(context=alpha, seq=1).content


def test_refuse_names_the_field_and_writes_nothing(api: Api, alpha: Context) -> None:
    set_screening(alpha.pk, "refuse")
    response = api.post("events/", {"kind": "user_message", "content": f"my key {CLOUD_KEY}"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "secret_detected"
    assert error["details"] == [{"field": "content", "kind": "AWS Access Key"}]
    assert CLOUD_KEY not in response.content.decode()
    response = api.post("events/", {"kind": "tool_result", "content": "x", "payload": {"c": CARD}})
    assert error_of(response)["details"] == [{"field": "payload", "kind": "Card number"}]
    response = api.post("transactions/", {"text": f'(context-tx (derive c (n "{CARD}")))'})
    assert error_of(response)["details"][0]["field"] == "text"
    bulk = {
        "events": [
            {"kind": "tool_result", "content": "fine"},
            {"kind": "tool_result", "content": CARD},
        ]
    }
    assert error_of(api.post("events/", bulk))["details"][0]["field"] == "events[1].content"
    assert not Event.objects.filter(context=alpha).exists()
    assert not TransactionRecord.objects.filter(context=alpha).exists()
    api.observe(f"order {NOT_A_CARD}")  # not a card: accepted


def test_mask_stores_masked_text_with_a_note(api: Api, alpha: Context) -> None:
    set_screening(alpha.pk, "mask")
    event = api.observe(f"key {CLOUD_KEY} and card {CARD}.", kind="user_message")
    stored = Event.objects.get(context=alpha, seq=event["seq"])
    assert CLOUD_KEY not in stored.content and "4111" not in stored.content
    assert stored.content.startswith("key ") and stored.content.endswith(".")
    assert len(stored.content) == len(f"key {CLOUD_KEY} and card {CARD}.")
    assert stored.payload == {
        "screened": [
            {"field": "content", "kind": "AWS Access Key"},
            {"field": "content", "kind": "Card number"},
        ]
    }
    api.commit(f'(context-tx (derive c (n "{CARD}")))')
    record = TransactionRecord.objects.get(context=alpha)
    assert "4111" not in record.text


def test_only_an_admin_changes_screening(api: Api, alpha: Context) -> None:
    from memory.contexts import issue_token

    body = '{"screening": "refuse"}'
    response = api.client.generic("PATCH", api.url(), body, "application/json")
    assert error_of(response)["code"] == "scope_insufficient"
    admin: Any = Api("alpha", issue_token(alpha, scope="admin").raw)
    response = admin.client.generic("PATCH", admin.url(), body, "application/json")
    assert response.status_code == 200 and response.json()["screening"] == "refuse"
