"""The watermark as a pydantic field: required, validated, always serialised in full.

Every model that carries a gap rate or a coverage figure declares ``watermark: WatermarkField``
with no default, so such a number cannot be built, serialised or read back without its sample
set's ``{paths, count, sha256, short, id, warning}`` (gap-signal spec §7.1)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

from knowmeter.samples import WATERMARK_WARNING, Watermark


def _to_watermark(value: Any) -> Any:
    if isinstance(value, dict):
        try:
            return Watermark.from_dict(value)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"a watermark needs paths, count and sha256 ({exc})") from None
    if not isinstance(value, Watermark):
        raise ValueError("a gap rate or coverage figure needs the sample set's Watermark")
    return value


def _from_watermark(w: Watermark) -> dict[str, Any]:
    return w.to_dict()


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The sample set this figure depends on. " + WATERMARK_WARNING,
    "required": ["paths", "count", "sha256", "short", "warning"],
    "properties": {
        "paths": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer", "minimum": 0},
        "sha256": {"type": "string"},
        "short": {"type": "string"},
        "id": {"type": "string"},
        "warning": {"type": "string"},
    },
}

WatermarkField = Annotated[
    Watermark,
    BeforeValidator(_to_watermark),
    PlainSerializer(_from_watermark, return_type=dict),
    WithJsonSchema(_SCHEMA),
]


def watermark_lines(w: Watermark) -> list[str]:
    """The two lines every rendering of a gap rate or coverage figure starts with."""
    return [f"sample set {', '.join(w.paths)} · {w.count} samples · {w.short}", f"⚠ {WATERMARK_WARNING}"]
