"""/api/schema/ and /api/docs/ (R37): every section-7 path, documented errors."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import GENERATOR_STATS
from rest_framework.test import APIClient

SECTION_7 = {
    ("get", "/api/v1/contexts/{slug}/"),
    ("post", "/api/v1/contexts/{slug}/events/"),
    ("get", "/api/v1/contexts/{slug}/events/"),
    ("get", "/api/v1/contexts/{slug}/events/{seq}/"),
    ("post", "/api/v1/contexts/{slug}/evaluations/"),
    ("post", "/api/v1/contexts/{slug}/transactions/"),
    ("get", "/api/v1/contexts/{slug}/transactions/"),
    ("get", "/api/v1/contexts/{slug}/frames/"),
    ("get", "/api/v1/contexts/{slug}/frames/{frame_id}/"),
    ("get", "/api/v1/contexts/{slug}/relations/"),
    ("post", "/api/v1/contexts/{slug}/recall/"),
    ("get", "/api/v1/contexts/{slug}/search/"),
    ("post", "/api/v1/contexts/{slug}/actions/"),
}


def _schema(db) -> dict:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def test_schema_covers_every_contract_path(db) -> None:
    schema = _schema(db)
    assert schema["openapi"].startswith("3.")
    operations = {(m, p) for p, item in schema["paths"].items() for m in item}
    assert operations >= SECTION_7


def test_every_context_operation_documents_its_errors_with_one_component(db) -> None:
    schema = _schema(db)
    error_ref = "#/components/schemas/Error"
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"error"}
    for path, item in schema["paths"].items():
        if not path.startswith("/api/v1/contexts/{slug}/"):
            continue
        for method, operation in item.items():
            responses = operation["responses"]
            assert {"400", "401", "404"} <= set(responses), (method, path)
            if method == "post":
                assert {"413", "415"} <= set(responses), (method, path)
            for code, response in responses.items():
                if code.startswith(("4", "5")):
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref == error_ref, (method, path, code)
            assert operation["security"][0] == {"bearerAuth": []}


def test_transactions_document_conflict_and_rule_violation(db) -> None:
    operation = _schema(db)["paths"]["/api/v1/contexts/{slug}/transactions/"]["post"]
    assert {"201", "409", "422"} <= set(operation["responses"])


def test_docs_page_is_served(db) -> None:
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


# Serving the OpenAPI schema logs no warning: the two `status` vocabularies (events, frames)
# have names of their own instead of colliding into hash-named enums, a warning in the
# server log every time `/api/schema/` was served.


def test_the_schema_is_served_without_a_warning(client: Any, db: Any, capsys: Any) -> None:
    GENERATOR_STATS.reset()  # warnings are printed once per process; start from none
    response = client.get("/api/schema/")
    assert response.status_code == 200
    err = capsys.readouterr().err
    assert "Warning" not in err and "Error" not in err, err
    schema = response.content.decode()
    assert "EventStatusEnum:" in schema and "FrameStatusEnum:" in schema
