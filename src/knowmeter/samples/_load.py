"""Loading sample files (omk JSON / YAML, JSONL) with one-line errors for bad input.

Loading streams: a JSONL file is read a line at a time, each record is dropped once validated
(a JSON / YAML file's parsed list gives up each record as it is read), and the watermark's hash
is fed one sample at a time — memory holds the samples and little else. Samples whose
assertions are written alike (``repr``: 1, 1.0 and true differ) share one list: read-only."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowmeter._yaml import parse_json, parse_yaml, read_user_lines, read_user_text
from knowmeter.config import UNKNOWN_KEY_ERRORS, error_to_show, unknown_key
from knowmeter.errors import InputError
from knowmeter.samples._digest import SampleDigest
from knowmeter.samples._model import SAMPLE_KEYS, Sample
from knowmeter.watermark import Watermark

DEFAULT_SAMPLE_FILES = ("eval-samples.yaml", "eval-samples.yml", "eval-samples.json", "eval-samples.jsonl")
_MISSING_FIX = "pass --samples or create it (knowmeter init)"


@dataclass(frozen=True, slots=True)
class SampleSet:
    """Loaded samples plus their watermark and the ``requires`` header (if the file had one)."""

    samples: tuple[Sample, ...]
    watermark: Watermark
    requires: dict[str, Any] | None = None

    def by_id(self) -> dict[str, Sample]:
        return {s.sample_id: s for s in self.samples}


def _where(path: Path, number: int) -> str:
    """How an error names a record: its line in a JSONL file, its place in a JSON / YAML list."""
    return f"line {number}" if path.suffix.lower() == ".jsonl" else f"sample #{number}"


def _records(path: Path) -> tuple[Iterator[tuple[int, Any]], dict[str, Any] | None]:
    """``(number, record)`` of each sample in ``path`` (numbered as ``_where`` names them), and
    the optional ``requires`` header."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".yaml", ".yml"):
        raise InputError(f"{path}: unknown sample file type {suffix!r}; use .json, .yaml, .yml or .jsonl")
    if suffix == ".jsonl":
        lines = read_user_lines(path, "sample file", _MISSING_FIX)
        return ((n, parse_json(line, path, f"line {n}")) for n, line in lines if line.strip()), None
    text = read_user_text(path, "sample file", _MISSING_FIX)
    data = parse_json(text, path) if suffix == ".json" else parse_yaml(text, path)
    del text
    requires: dict[str, Any] | None = None
    if isinstance(data, dict):
        if "samples" not in data and isinstance(data.get("evals"), list):  # Skill Graph's shape, not a sample file
            raise InputError(
                f"{path}: a Skill Graph eval file ('evals' list of cases), not a sample file; measure the skill "
                "with it: knowmeter comprehend path/to/SKILL.md --evals " + str(path)
            )
        if "samples" not in data:
            raise InputError(f"{path}: expected a list of samples or a mapping with a 'samples' key")
        req = data.get("requires")
        requires = req if isinstance(req, dict) else None
        data = data["samples"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of samples, got {type(data).__name__}")
    return _given_up(data), requires


def _given_up(records: list[Any]) -> Iterator[tuple[int, Any]]:
    """Each record with its number, dropped from ``records`` as it is handed out."""
    for i in range(len(records)):
        record, records[i] = records[i], None
        yield i + 1, record


def _validate(path: Path, where: str, record: Any) -> Sample:
    if not isinstance(record, dict):
        raise InputError(f"{path}: {where}: a sample must be a mapping, got {type(record).__name__}")
    sid = record.get("sample_id")
    label = f"sample {sid!r}" if sid not in (None, "") else where
    if sid in (None, ""):
        raise InputError(f"{path}: {where}: missing sample_id; give every sample a unique sample_id")
    try:
        return Sample.from_record(record)
    except ValidationError as exc:
        err = error_to_show(exc)
        loc = ".".join(str(p) for p in err["loc"]) or "sample"
        if err["type"] in UNKNOWN_KEY_ERRORS:
            raise InputError(f"{path}: {label}: {unknown_key(loc, SAMPLE_KEYS, what='sample key')}") from None
        if err["type"] in ("missing", "missing_argument"):
            raise InputError(f"{path}: {label}: field {loc!r}: Field required; add it to the sample") from None
        raise InputError(f"{path}: {label}: field {loc!r}: {err['msg']}") from None


def load_samples(paths: Path | Iterable[Path], *, display_paths: Iterable[str] | None = None) -> SampleSet:
    """Load and validate one or more sample files; ids must be present and unique across them.
    ``display_paths`` (default: the paths) is how the watermark names the files."""
    path_list = [paths] if isinstance(paths, Path) else list(paths)
    if not path_list:
        raise InputError("no sample file given; pass --samples eval-samples.yaml")
    samples: list[Sample] = []
    seen: set[str] = set()
    origins = array("Q")  # per sample: its file's index and its record number (for a duplicate's message)
    digest = SampleDigest()
    alike: dict[str, list[dict[str, Any]]] = {}  # assertions as written → the one list samples share
    requires: dict[str, Any] | None = None
    for index, path in enumerate(path_list):
        records, req = _records(path)
        requires = requires or req
        for number, record in records:
            sample = _validate(path, _where(path, number), record)
            if sample.sample_id in seen:
                first = next(i for i, s in enumerate(samples) if s.sample_id == sample.sample_id)
                at = path_list[origins[2 * first]]
                raise InputError(
                    f"{path}: {_where(path, number)}: duplicate sample_id {sample.sample_id!r} "
                    f"(first seen in {at.name} {_where(at, origins[2 * first + 1])}); "
                    "sample ids must be unique"
                )
            sample.assertions = alike.setdefault(repr(sample.assertions), sample.assertions)
            seen.add(sample.sample_id)
            origins.extend((index, number))
            samples.append(sample)
            digest.add(sample)
    if not samples:
        raise InputError(f"{path_list[0]}: no samples in the file; add at least one sample")
    shown = tuple(display_paths) if display_paths is not None else tuple(str(p) for p in path_list)
    watermark = Watermark(shown, len(samples), digest.hexdigest())
    return SampleSet(tuple(samples), watermark, requires)


def find_sample_file(directory: Path) -> Path | None:
    """The default sample file in ``directory`` (eval-samples.yaml|yml|json|jsonl), if any."""
    for name in DEFAULT_SAMPLE_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None
