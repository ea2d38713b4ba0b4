"""The watermark: which sample set (or trace set) a gap rate or coverage figure depends on.

Gap-signal spec §7.1: a gap rate or a coverage figure is only ever shown, stored or read back
together with the ``{paths, count, sha256, short, id, warning}`` of the set it was measured on.
This module has no dependencies, so scanning code (``observe``) can carry watermarks without
loading the sample models.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

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

    def lines(self) -> list[str]:
        """The two lines every rendering of a gap rate or coverage figure starts with."""
        return [f"sample set {', '.join(self.paths)} · {self.count} samples · {self.short}", f"⚠ {WATERMARK_WARNING}"]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, with the derived ``short`` / ``id`` and the warning."""
        return {"paths": list(self.paths), "count": self.count, "sha256": self.sha256, "short": self.short,
                "id": self.id, "warning": WATERMARK_WARNING}

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
