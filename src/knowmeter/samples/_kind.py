"""Which kind of sample set a run measured: written by people, a probe set (every sample made by
``knowmeter probe``) or a mix of both — recorded in ``run.json`` so the two gap rates are shown
side by side and never merged."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from knowmeter.samples._model import Sample

SampleSetKind = Literal["human", "probe", "mixed"]
PROBE_PROVENANCE = "probe"


def sample_set_info(samples: Iterable[Sample]) -> dict[str, Any]:
    """``{"kind", "probe_samples", "generators", "prompt_hashes", "kb_sha256"}`` of a sample set:
    ``probe`` when every sample has ``provenance: probe``, ``human`` when none has, else ``mixed``
    (its gap rate blends both boundaries: the report says so)."""
    total = probes = 0
    generators: set[str] = set()
    prompt_hashes: set[str] = set()
    kb: set[str] = set()
    for s in samples:
        total += 1
        if s.provenance != PROBE_PROVENANCE:
            continue
        probes += 1
        meta = s.probe
        if meta is not None:
            for key, into in (("generator", generators), ("prompt_hash", prompt_hashes), ("kb_sha256", kb)):
                if isinstance(meta.get(key), str):
                    into.add(meta[key])
    kind: SampleSetKind = "human" if probes == 0 else "probe" if probes == total else "mixed"
    return {
        "kind": kind,
        "probe_samples": probes,
        "generators": sorted(generators),
        "prompt_hashes": sorted(prompt_hashes),
        "kb_sha256": sorted(kb),
    }
