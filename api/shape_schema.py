"""The OpenAPI components of the responses, derived from the TypedDicts of memory.shapes:
each shape becomes one DRF serializer class that drf-spectacular reads, so a response's
field list is declared once (in its TypedDict) and documented from there.

`Annotated` marks on a field (memory.shapes.fields) give its description, its closed set of
values (an enum), its time format, or that it is documented as free JSON."""

from __future__ import annotations

import types
import typing
from typing import Any, ClassVar, NotRequired, Required, Union

from rest_framework import serializers

from memory.shapes.fields import DATE_TIME, Choices, Doc, Opaque

_SERIALIZERS: dict[type, type[serializers.Serializer]] = {}
_SCALARS: dict[Any, type[serializers.Field]] = {
    str: serializers.CharField,
    int: serializers.IntegerField,
    float: serializers.FloatField,
    bool: serializers.BooleanField,
}


# No docstring: drf-spectacular would print it as every component's description.
class ShapeSerializer(serializers.Serializer):
    # The fields are those of the TypedDict in `shape`; a subclass names the component
    # (`ContextSerializer` documents `Context`).

    shape: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        shape = cls.__dict__.get("shape")
        if shape is None:
            return
        hints = typing.get_type_hints(shape, include_extras=True)
        # DRF's metaclass has already collected the declared fields: add the shape's.
        cls._declared_fields = {
            **cls._declared_fields,
            **{key: _field(annotation) for key, annotation in hints.items()},
        }
        _SERIALIZERS[shape] = cls


def shape_serializer(shape: type) -> type[serializers.Serializer]:
    """The serializer documenting the TypedDict `shape`: the `ShapeSerializer` declared for
    it, else one made here, named after the shape without its `Json` suffix (one class per
    shape, so a nested shape is one component wherever it appears)."""
    found = _SERIALIZERS.get(shape)
    if found is None:
        title = shape.__name__.removesuffix("Json")
        made = serializers.SerializerMetaclass(
            f"{title}Serializer", (ShapeSerializer,), {"shape": shape}
        )
        found = typing.cast(type[serializers.Serializer], made)
    return found


def _unwrap(annotation: Any) -> tuple[Any, list[Any], bool]:
    """The bare type, the `Annotated` marks, and whether the key may be absent."""
    marks: list[Any] = []
    required = True
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            marks.extend(annotation.__metadata__)
            annotation = typing.get_args(annotation)[0]
        elif origin is NotRequired:
            required = False
            annotation = typing.get_args(annotation)[0]
        elif origin is Required:
            annotation = typing.get_args(annotation)[0]
        else:
            return annotation, marks, required


def _field(annotation: Any) -> serializers.Field:
    bare, marks, required = _unwrap(annotation)
    options: dict[str, Any] = {}
    if not required:
        options["required"] = False
    if typing.get_origin(bare) in (Union, types.UnionType):
        parts = [a for a in typing.get_args(bare) if a is not type(None)]
        if len(parts) < len(typing.get_args(bare)):
            options["allow_null"] = True
        bare = parts[0] if len(parts) == 1 else Any
    for mark in marks:
        if isinstance(mark, Doc):
            options["help_text"] = mark.text
    if any(isinstance(m, Opaque) for m in marks):
        if typing.get_origin(bare) is list:
            return serializers.ListField(child=serializers.JSONField(), **options)
        return serializers.JSONField(**options)
    choices = next((m for m in marks if isinstance(m, Choices)), None)
    if choices is not None:
        return serializers.ChoiceField(choices=list(choices.values), **options)
    if DATE_TIME in marks:
        return serializers.DateTimeField(**options)
    if typing.get_origin(bare) is typing.Literal:
        return serializers.ChoiceField(choices=list(typing.get_args(bare)), **options)
    if bare in _SCALARS:
        return _SCALARS[bare](**options)
    if typing.is_typeddict(bare):
        return shape_serializer(bare)(**options)
    if typing.get_origin(bare) is dict:
        value = typing.get_args(bare)[1]
        if value in _SCALARS:  # a map of plain values; other maps are free JSON
            return serializers.DictField(child=_SCALARS[value](), **options)
        return serializers.JSONField(**options)
    if typing.get_origin(bare) is list:
        (item,) = typing.get_args(bare)
        if typing.is_typeddict(_unwrap(item)[0]):
            return shape_serializer(_unwrap(item)[0])(many=True, **options)
        return serializers.ListField(child=_field(item), **options)
    return serializers.JSONField(**options)
