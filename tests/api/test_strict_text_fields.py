"""Text fields refuse lone surrogates with REST framework's own message and code, checked
by one search however long the text is."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import ValidationError

from api.fields import ContentField, StrictCharField


@pytest.mark.parametrize("field", [StrictCharField(), ContentField()])
def test_a_lone_surrogate_is_refused_with_its_code_point(field):
    with pytest.raises(ValidationError) as raised:
        field.run_validation("ok " * 20_000 + "\udc80")
    assert raised.value.get_codes() == ["surrogate_characters_not_allowed"]
    assert "U+DC80" in str(raised.value.detail[0])


def test_text_without_surrogates_passes_unchanged():
    assert StrictCharField(trim_whitespace=False).run_validation("héllo 世界 🙂") == "héllo 世界 🙂"
