"""``comprehend --calibrate``: before any answer is graded, the grader grades *anchor answers*
whose quality is known, and must land each in its band — or the run is refused (or flagged).

Skill Graph's own grader scores cluster at 0.7–0.92 and cannot separate skills; an anchor set
catches such a grader before it decides anything. An anchor file (JSON)::

    {"skill_name": "refund-policy",
     "anchors": [{"id": "c2-strong", "case": "2", "answer": "…", "band": [0.67, 1.0], "note": "…"}]}

``case`` is a case id of the eval file being graded, ``band`` the range the behavior pass
fraction (the share of the case's behaviors the grader passes, after knowmeter's own checks —
the verbatim check included) must fall in. Default file: ``<eval file stem>.anchors.json``
beside the eval file (``knowmeter init``'s comprehension example has one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowmeter.ask import CallSite
from knowmeter.comprehension._case import GraderCase
from knowmeter.comprehension._grade import grade_answer
from knowmeter.errors import InputError
from knowmeter.grading import JudgeSpec


@dataclass(frozen=True, slots=True)
class Anchor:
    """One answer of known quality to one case, and the band its behavior pass fraction must hit."""

    id: str
    case_id: str
    answer: str
    low: float
    high: float
    note: str | None = None


@dataclass(frozen=True, slots=True)
class AnchorResult:
    """What the grader made of one anchor: its pass fraction (None: the grader left it ungraded)."""

    anchor: Anchor
    fraction: float | None
    why: str | None = None

    @property
    def in_band(self) -> bool:
        return self.fraction is not None and self.anchor.low - 1e-9 <= self.fraction <= self.anchor.high + 1e-9

    def line(self) -> str:
        a = self.anchor
        got = "ungraded" + (f" ({self.why})" if self.why else "") if self.fraction is None else f"{self.fraction:.2f}"
        mark = "ok " if self.in_band else "OUT"
        return f"  {mark} anchor {a.id} (case {a.case_id}): {got}, band [{a.low:.2f}, {a.high:.2f}]"


def default_anchor_file(eval_file: Path) -> Path:
    """``<eval file stem>.anchors.json`` beside the eval file."""
    return eval_file.with_name(f"{eval_file.stem}.anchors.json")


def load_anchors(path: Path, cases: dict[str, GraderCase], skill_name: str) -> tuple[Anchor, ...]:
    """Read and check an anchor file against the cases being graded; ``InputError`` (one line
    naming the file and the anchor) for anything wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise InputError(
            f"{path}: no anchor file; --calibrate needs anchors (--anchors FILE, or this file beside the eval file)"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    items = data.get("anchors") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise InputError(
            f'{path}: an anchor file is {{"skill_name": …, "anchors": [{{"id", "case", "answer", "band"}}, …]}}'
        )
    if data.get("skill_name", skill_name) != skill_name:
        raise InputError(f"{path}: skill_name {data['skill_name']!r} is not the skill {skill_name!r}")
    return tuple(_anchor(path, i, raw, cases) for i, raw in enumerate(items))


def _anchor(path: Path, index: int, raw: Any, cases: dict[str, GraderCase]) -> Anchor:
    where = f"{path}: anchor {index + 1}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be an object with id, case, answer, band")
    aid = str(raw.get("id", index + 1))
    where = f"{path}: anchor {aid}"
    case = str(raw.get("case", ""))
    if case not in cases:
        raise InputError(f"{where}: case {case!r} is not a graded case of the eval file (cases: {', '.join(cases)})")
    answer, band = raw.get("answer"), raw.get("band")
    if not isinstance(answer, str) or not answer.strip():
        raise InputError(f"{where}: 'answer' must be the anchor's answer text")
    if (
        not isinstance(band, list)
        or len(band) != 2
        or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in band)
        or not 0 <= band[0] <= band[1] <= 1
    ):
        raise InputError(f"{where}: 'band' must be [low, high] with 0 ≤ low ≤ high ≤ 1 (a behavior pass fraction)")
    note = raw.get("note")
    return Anchor(aid, case, answer, float(band[0]), float(band[1]), note if isinstance(note, str) else None)


async def calibrate(
    anchors: Sequence[Anchor], cases: dict[str, GraderCase], judges: Sequence[JudgeSpec], *, judge_repeat: int
) -> list[AnchorResult]:
    """Grade every anchor as an answer would be graded (same prompt, checks and majority)."""
    out = []
    for a in anchors:
        site = CallSite(f"calibration::{a.id}", a.case_id, None)
        graded = await grade_answer(cases[a.case_id], a.answer, judges, judge_repeat=judge_repeat, site=site)
        fraction = graded.behavior_pass_fraction if graded.graded else None
        out.append(AnchorResult(a, fraction, graded.ungraded_reason))
    return out


def calibration_summary(results: Sequence[AnchorResult], graders: str) -> list[str]:
    """The lines the terminal shows: a headline, then one per anchor."""
    missed = [r for r in results if not r.in_band]
    head = (
        f"calibration: {graders} put all {len(results)} anchor(s) in their bands"
        if not missed
        else f"calibration: {graders} put {len(missed)} of {len(results)} anchor(s) outside their bands"
    )
    return [head, *(r.line() for r in results)]


def calibration_flag(results: Sequence[AnchorResult]) -> str | None:
    """The caveat a flagged run carries (None when every anchor landed in its band)."""
    missed = [r for r in results if not r.in_band]
    if not missed:
        return None
    names = ", ".join(r.anchor.id for r in missed)
    return f"grader calibration: {len(missed)} of {len(results)} anchor(s) outside their bands ({names})"


def run_calibration(
    skill: Path, evals: Path | None, *, ngram: int, judges: Sequence[str], judge_repeat: int, anchors: Path | None
) -> list[AnchorResult]:
    """Load the skill's cases and the anchors (``anchors``, else the default file beside the eval
    file), then grade every anchor with ``judges`` (``--judge`` values)."""
    import anyio

    from knowmeter.comprehension._inputs import load_inputs
    from knowmeter.judges import build_judges

    if not judges:
        raise InputError("--calibrate needs the grader to calibrate: pass --judge executor:model")
    inputs = load_inputs(skill, evals, n=ngram)
    cases = {c.case_id: c for c in inputs.cases}
    found = load_anchors(anchors or default_anchor_file(inputs.case_file.path), cases, inputs.skill.name)
    specs = build_judges(list(judges))
    return anyio.run(lambda: calibrate(found, cases, specs, judge_repeat=judge_repeat))
