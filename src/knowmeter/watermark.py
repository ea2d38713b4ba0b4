"""The watermark: which sample set (or trace set) a gap rate or coverage figure depends on.

Gap-signal spec §7.1: a gap rate or a coverage figure is only ever shown, stored or read back
together with the ``{paths, count, sha256, short, id, warning}`` of the set it was measured on.
This module has no dependencies, so scanning code (``observe``) can carry watermarks without
loading the sample models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

WATERMARK_WARNING = (
    "This metric only reflects the interaction between the current test set and the knowledge "
    "base, and does not represent the knowledge base's absolute completeness."
)


@dataclass(frozen=True, slots=True)
class Watermark:
    """Identifies the sample set a number depends on (gap-signal spec §7.1)."""

    paths: tuple[str, ...]
    count: int
    sha256: str

    @property
    def short(self) -> str:
        """First 8 hex of the content hash, as shown to people."""
        return self.sha256[:8]

    @property
    def id(self) -> str:
        """``<file name>@<short hash>``: the sample-set id used in trends."""
        names = "+".join(PurePath(p).name for p in self.paths)
        return f"{names}@{self.short}"

    @property
    def warning(self) -> str:
        """The text every gap rate or coverage figure is shown with."""
        return WATERMARK_WARNING

    def lines(self) -> list[str]:
        """The two lines every rendering of a gap rate or coverage figure starts with."""
        return [f"sample set {', '.join(self.paths)} · {self.count} samples · {self.short}", f"⚠ {WATERMARK_WARNING}"]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, with the derived ``short`` / ``id`` and the warning."""
        return {
            "paths": list(self.paths),
            "count": self.count,
            "sha256": self.sha256,
            "short": self.short,
            "id": self.id,
            "warning": self.warning,
        }

    @classmethod
    def from_dict(cls, d: Any) -> Watermark:
        """Read ``to_dict`` output back; ``ValueError`` naming what is missing or wrong."""
        if not isinstance(d, dict):
            raise ValueError(f"a watermark is a mapping with paths, count and sha256, not {type(d).__name__}")
        paths, count, sha256 = d.get("paths"), d.get("count"), d.get("sha256")
        if not isinstance(paths, list | tuple) or not all(isinstance(p, str) for p in paths):
            raise ValueError("a watermark needs 'paths', a list of file names")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError("a watermark needs 'count', a whole number >= 0")
        if not isinstance(sha256, str) or not sha256:
            raise ValueError("a watermark needs 'sha256', the content hash")
        return cls(tuple(paths), count, sha256)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """As a field of a pydantic model (report.json, run.json): read from and written as the
        ``to_dict`` form, whose six keys the JSON Schema requires."""
        from pydantic_core import core_schema as cs

        text = cs.str_schema()
        stored = cs.typed_dict_schema(
            {
                "paths": cs.typed_dict_field(cs.list_schema(text)),
                "count": cs.typed_dict_field(cs.int_schema(ge=0, strict=True)),
                "sha256": cs.typed_dict_field(cs.str_schema(min_length=1)),
                "short": cs.typed_dict_field(text),
                "id": cs.typed_dict_field(text),
                "warning": cs.typed_dict_field(text),
            },
            extra_behavior="forbid",
            ref="Watermark",
        )
        read = cs.no_info_after_validator_function(cls.from_dict, stored)
        return cs.no_info_wrap_validator_function(
            lambda v, read_dict: v if isinstance(v, cls) else read_dict(v),
            read,
            serialization=cs.plain_serializer_function_ser_schema(lambda w: w.to_dict(), return_schema=stored),
        )
