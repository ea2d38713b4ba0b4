"""Reading, validating and scaffolding gold directories, with one-line errors."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from knowmeter._yaml import parse_yaml, read_user_text
from knowmeter.errors import InputError
from knowmeter.gold._model import GoldAnnotation, GoldMetadata, GoldScale, GoldSet

METADATA = "metadata.yaml"
ANNOTATIONS = "annotations.yaml"


def _read_yaml(path: Path) -> Any:
    if not path.is_file():
        raise InputError(
            f"{path}: missing; a gold directory holds {METADATA} and {ANNOTATIONS} "
            "(create one with `knowmeter gold init`)"
        )
    return parse_yaml(read_user_text(path, "gold file"), path)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def load_metadata(directory: Path) -> GoldMetadata:
    """``metadata.yaml`` (``metadata:`` block; a bare mapping is accepted too)."""
    path = directory / METADATA
    data = _read_yaml(path)
    block = data.get("metadata", data) if isinstance(data, dict) else None
    if not isinstance(block, dict):
        raise InputError(f"{path}: expected a `metadata:` mapping with annotator and scale")
    try:
        return GoldMetadata.model_validate(block)
    except ValidationError as exc:
        raise InputError(f"{path}: metadata.{_first_error(exc)}; fix the metadata block") from None


def _finite(number: float) -> bool:
    """Whether ``number`` is finite as a float (an integer too big for one is not)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def _annotation(path: Path, index: int, entry: Any, scale: GoldScale) -> GoldAnnotation:
    if not isinstance(entry, dict):
        raise InputError(f"{path}: annotation #{index + 1}: expected a mapping with sample_id and score")
    sid = entry.get("sample_id")
    where = f"sample {sid!r}" if isinstance(sid, str) and sid else f"annotation #{index + 1}"
    unknown = sorted(set(entry) - {"sample_id", "score", "reason"})
    if unknown:
        raise InputError(
            f"{path}: {where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: sample_id, score, reason"
        )
    score = entry.get("score")
    if score is None:
        raise InputError(f"{path}: {where}: score is empty; fill in a score from {scale.min:g} to {scale.max:g}")
    if isinstance(score, bool) or not isinstance(score, int | float) or not _finite(score):
        raise InputError(f"{path}: {where}: score {score!r} is not a number; use {scale.min:g}–{scale.max:g}")
    if not scale.min <= score <= scale.max:
        raise InputError(
            f"{path}: {where}: score {score:g} is outside the declared scale "
            f"{scale.min:g}–{scale.max:g}; fix the score or the scale in {METADATA}"
        )
    try:
        return GoldAnnotation.model_validate(entry)
    except ValidationError as exc:
        raise InputError(f"{path}: {where}: {_first_error(exc)}") from None


def load_gold(directory: Path) -> GoldSet:
    """Load and validate a gold directory: every score inside the declared scale, ids unique."""
    if not directory.is_dir():
        raise InputError(f"{directory}: not a gold directory; create one with `knowmeter gold init`")
    metadata = load_metadata(directory)
    path = directory / ANNOTATIONS
    data = _read_yaml(path)
    entries = data.get("annotations") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise InputError(f"{path}: expected an `annotations:` list of {{sample_id, score, reason}}")
    annotations: list[GoldAnnotation] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        ann = _annotation(path, index, entry, metadata.scale)
        if ann.sample_id in seen:
            raise InputError(f"{path}: sample {ann.sample_id!r}: annotated twice; keep one entry per sample")
        seen.add(ann.sample_id)
        annotations.append(ann)
    if not annotations:
        raise InputError(f"{path}: no annotations; add one entry per sample")
    return GoldSet(directory=directory, metadata=metadata, annotations=tuple(annotations))


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def init_gold(
    sample_ids: list[str], directory: Path, *, annotator: str, scale: GoldScale | None = None, force: bool = False
) -> list[Path]:
    """Write a template gold directory for ``sample_ids``: metadata plus one empty entry per
    sample (``score: null``, which ``validate`` reports until it is filled in)."""
    scale = scale or GoldScale(min=1, max=5)
    targets = [directory / METADATA, directory / ANNOTATIONS]
    existing = [str(p) for p in targets if p.exists()]
    if existing and not force:
        raise InputError(f"{existing[0]}: already exists; pass --force to overwrite or choose another --gold-dir")
    if not sample_ids:
        raise InputError("the sample file has no samples to annotate")
    directory.mkdir(parents=True, exist_ok=True)
    metadata = {
        "metadata": {
            "annotator": annotator,
            "annotatedAt": dt.date.today().isoformat(),
            "version": "0.1",
            "scale": {"min": _plain(scale.min), "max": _plain(scale.max)},
            "notes": "Who annotated, how, and against which rubric. The annotator must not be one of the judges.",
        }
    }
    lines = [f"# One entry per sample: set score ({scale.min:g}–{scale.max:g}) and a short reason.", "annotations:"]
    for sid in sample_ids:
        lines += [f"  - sample_id: {json.dumps(sid, ensure_ascii=False)}", "    score: null", '    reason: ""']
    _write_atomic(targets[0], yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000))
    _write_atomic(targets[1], "\n".join(lines) + "\n")
    return targets


def _plain(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x
