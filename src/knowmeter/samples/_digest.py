"""The content hash of a sample set: sha256 of the samples' canonical JSON (one array, sorted
keys, no whitespace, unset fields omitted), fed one sample at a time so the whole text is never
built — the bytes are those of ``json.dumps([...])`` over every sample, so a watermark is the same
as it always was, and re-formatting a file does not change it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from knowmeter.samples._model import Sample

if TYPE_CHECKING:
    from hashlib import _Hash


class SampleDigest:
    """Add samples in order; ``hexdigest()`` / ``hash()`` close the array."""

    __slots__ = ("_h", "_n")

    def __init__(self) -> None:
        self._h = hashlib.sha256(b"[")
        self._n = 0

    def add(self, sample: Sample) -> None:
        if self._n:
            self._h.update(b",")
        record = sample.to_record(omit_unset=True)
        self._h.update(json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
        self._n += 1

    def hash(self) -> _Hash:
        """The sha256 of the samples so far, as an open hash (the caller may add more to it)."""
        h = self._h.copy()
        h.update(b"]")
        return h

    def hexdigest(self) -> str:
        return self.hash().hexdigest()


def sample_set_hash(samples: Iterable[Sample]) -> _Hash:
    """The sha256 of ``samples``' canonical JSON, open for the caller to add more to."""
    digest = SampleDigest()
    for sample in samples:
        digest.add(sample)
    return digest.hash()
