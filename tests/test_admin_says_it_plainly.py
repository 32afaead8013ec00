"""Admin's words for a newcomer: the slug's help text shows the URL it describes (admin
renders help text as HTML, where a written `<slug>` vanished and left `/api/v1/contexts//`),
and a bad threshold is refused in words once, without the check constraint's raw name."""

from __future__ import annotations

from typing import Any


def test_the_slug_help_text_shows_the_url(admin_client: Any) -> None:
    page = admin_client.get("/admin/memory/context/add/").content.decode()
    assert "/api/v1/contexts/SLUG/ and /contexts/SLUG/" in page
    assert "/api/v1/contexts//" not in page


def test_a_bad_threshold_is_refused_in_words_only(admin_client: Any) -> None:
    response = admin_client.post(
        "/admin/memory/context/add/",
        {
            "slug": "thresholds",
            "name": "Thresholds",
            "grace_ticks": 8,
            "capacity_tokens": 1000,
            "observation_budget_tokens": 2000,
            "pressure_percent": 95,
            "maintenance_percent": 90,
            "maintenance_exit_percent": 80,
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "need 0 &lt; pressure_percent &lt;= maintenance_percent" in page
    assert "Constraint" not in page and "context_thresholds" not in page
