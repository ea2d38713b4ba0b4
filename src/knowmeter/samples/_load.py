"""Loading sample files (omk JSON / YAML, JSONL) with one-line errors for bad input."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowmeter._yaml import parse_json, parse_yaml, read_user_text
from knowmeter.config import error_to_show, unknown_key
from knowmeter.errors import InputError
from knowmeter.samples._model import Sample
from knowmeter.watermark import Watermark

DEFAULT_SAMPLE_FILES = ("eval-samples.yaml", "eval-samples.yml", "eval-samples.json", "eval-samples.jsonl")


@dataclass(frozen=True, slots=True)
class SampleSet:
    """Loaded samples plus their watermark and the ``requires`` header (if the file had one)."""

    samples: tuple[Sample, ...]
    watermark: Watermark
    requires: dict[str, Any] | None = None

    def by_id(self) -> dict[str, Sample]:
        return {s.sample_id: s for s in self.samples}


def canonical_sample_bytes(samples: Iterable[Sample]) -> bytes:
    """Canonical JSON of the samples (sorted keys, no whitespace, unset fields omitted): the
    content the watermark hashes, so re-formatting a file does not change it."""
    payload = [s.model_dump(mode="json", exclude_none=True, exclude_defaults=True) for s in samples]
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def _read_records(path: Path) -> tuple[list[tuple[str, Any]], dict[str, Any] | None]:
    """Return ``[(where, record)]`` and the optional ``requires`` header."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".yaml", ".yml"):
        raise InputError(f"{path}: unknown sample file type {suffix!r}; use .json, .yaml, .yml or .jsonl")
    text = read_user_text(path, "sample file", "pass --samples or create it (knowmeter init)")
    if suffix == ".jsonl":
        out: list[tuple[str, Any]] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                out.append((f"line {lineno}", parse_json(line, path, f"line {lineno}")))
        return out, None
    data = parse_json(text, path) if suffix == ".json" else parse_yaml(text, path)
    requires: dict[str, Any] | None = None
    if isinstance(data, dict):
        if "samples" not in data:
            raise InputError(f"{path}: expected a list of samples or a mapping with a 'samples' key")
        req = data.get("requires")
        requires = req if isinstance(req, dict) else None
        data = data["samples"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of samples, got {type(data).__name__}")
    return [(f"sample #{i + 1}", rec) for i, rec in enumerate(data)], requires


def _validate(path: Path, where: str, record: Any) -> Sample:
    if not isinstance(record, dict):
        raise InputError(f"{path}: {where}: a sample must be a mapping, got {type(record).__name__}")
    sid = record.get("sample_id")
    label = f"sample {sid!r}" if sid not in (None, "") else where
    if sid in (None, ""):
        raise InputError(f"{path}: {where}: missing sample_id; give every sample a unique sample_id")
    try:
        return Sample.model_validate(record)
    except ValidationError as exc:
        err = error_to_show(exc)
        loc = ".".join(str(p) for p in err["loc"]) or "sample"
        if err["type"] == "extra_forbidden":
            known = [f.alias or name for name, f in Sample.model_fields.items()]
            raise InputError(f"{path}: {label}: {unknown_key(loc, known, what='sample key')}") from None
        raise InputError(f"{path}: {label}: field {loc!r}: {err['msg']}") from None


def load_samples(paths: Path | Iterable[Path], *, display_paths: Iterable[str] | None = None) -> SampleSet:
    """Load and validate one or more sample files; ids must be present and unique across them.
    ``display_paths`` (default: the paths) is how the watermark names the files."""
    path_list = [paths] if isinstance(paths, Path) else list(paths)
    if not path_list:
        raise InputError("no sample file given; pass --samples eval-samples.yaml")
    samples: list[Sample] = []
    seen: dict[str, str] = {}
    requires: dict[str, Any] | None = None
    for path in path_list:
        records, req = _read_records(path)
        requires = requires or req
        for where, record in records:
            sample = _validate(path, where, record)
            if sample.sample_id in seen:
                raise InputError(
                    f"{path}: {where}: duplicate sample_id {sample.sample_id!r} "
                    f"(first seen in {seen[sample.sample_id]}); "
                    "sample ids must be unique"
                )
            seen[sample.sample_id] = f"{path.name} {where}"
            samples.append(sample)
    if not samples:
        raise InputError(f"{path_list[0]}: no samples in the file; add at least one sample")
    digest = hashlib.sha256(canonical_sample_bytes(samples)).hexdigest()
    shown = tuple(display_paths) if display_paths is not None else tuple(str(p) for p in path_list)
    watermark = Watermark(shown, len(samples), digest)
    return SampleSet(tuple(samples), watermark, requires)


def find_sample_file(directory: Path) -> Path | None:
    """The default sample file in ``directory`` (eval-samples.yaml|yml|json|jsonl), if any."""
    for name in DEFAULT_SAMPLE_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None
