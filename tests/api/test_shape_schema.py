"""A response component is derived from its TypedDict (api.shape_schema): every key becomes
a field, NotRequired keys are not required, `X | None` is nullable, and the Annotated marks
give the description, the enum, the time format and free JSON."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from rest_framework import serializers

from api.shape_schema import ShapeSerializer, shape_serializer
from memory.shapes.fields import OPAQUE, Choices, Doc, Timestamp


class Inner(TypedDict):
    n: int


class Outer(TypedDict):
    name: Annotated[str, Doc("what it is called")]
    level: Annotated[str, Choices(("low", "high"))]
    kind: Literal["a", "b"]
    when: Timestamp
    maybe: int | None
    later: NotRequired[float]
    inner: Inner
    inners: list[Inner]
    tags: list[str]
    counts: dict[str, int]
    free: Annotated[list[Inner], OPAQUE]
    payload: Any


class OuterSerializer(ShapeSerializer):
    shape = Outer


def test_each_key_becomes_the_field_its_type_and_marks_say() -> None:
    fields = OuterSerializer().fields
    assert list(fields) == list(Outer.__annotations__)
    assert isinstance(fields["name"], serializers.CharField)
    assert fields["name"].help_text == "what it is called"
    assert isinstance(fields["level"], serializers.ChoiceField)
    assert list(fields["level"].choices) == ["low", "high"]
    assert list(fields["kind"].choices) == ["a", "b"]
    assert isinstance(fields["when"], serializers.DateTimeField)
    assert fields["maybe"].allow_null and fields["maybe"].required
    assert not fields["later"].required
    assert isinstance(fields["tags"], serializers.ListField)
    assert isinstance(fields["counts"], serializers.DictField)
    assert isinstance(fields["free"], serializers.ListField)
    assert isinstance(fields["free"].child, serializers.JSONField)
    assert isinstance(fields["payload"], serializers.JSONField)


def test_a_nested_shape_is_one_serializer_wherever_it_appears() -> None:
    fields = OuterSerializer().fields
    nested = shape_serializer(Inner)
    assert nested.__name__ == "InnerSerializer"
    assert type(fields["inner"]) is nested
    assert isinstance(fields["inners"], serializers.ListSerializer)
    assert type(fields["inners"].child) is nested
