"""``comprehend --calibrate``: the grader grades anchor answers of known quality first and must
land each in its band, or the run is refused (``--on-miscalibration refuse``, exit 1, nothing
run) or flagged (a caveat: it cannot PASS). Offline: the scripted grader calibrates on the demo
skill's anchors; a rubber-stamp grader (passes everything) is caught by the weak anchors."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import knowmeter.demo
from knowmeter.cli import cli
from knowmeter.comprehension import calibration_flag, run_calibration

TEMPLATE = Path(knowmeter.demo.__file__).parent / "template" / "comprehension"
RUBBER_STAMP = f"{sys.executable} {Path(__file__).with_name('grader_script.py')} ok"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    shutil.copytree(TEMPLATE, tmp_path / "comprehension")
    return tmp_path / "comprehension"


def _calibrate(demo: Path, judge: str, anchors: Path | None = None) -> list[tuple[str, float | None, bool]]:
    results = run_calibration(
        demo / "skills" / "refund-policy", demo / "evals" / "refund-policy.json",
        ngram=6, judges=[judge], judge_repeat=1, anchors=anchors,
    )  # fmt: skip
    return [(r.anchor.id, r.fraction, r.in_band) for r in results]


def test_the_scripted_grader_lands_every_demo_anchor_in_its_band(demo: Path) -> None:
    got = _calibrate(demo, "scripted-grader")
    assert len(got) == 6 and all(ok for _, _, ok in got), got
    # the copied definition fails its verbatim behavior in code, whatever the grader says
    assert dict((i, f) for i, f, _ in got)["c1-copied"] == pytest.approx(2 / 3)


def test_a_rubber_stamp_grader_misses_the_weak_anchors(demo: Path) -> None:
    got = _calibrate(demo, RUBBER_STAMP)
    assert [i for i, _, ok in got if not ok] == ["c2-wrong", "c7-accepts"]


def test_refuse_grades_nothing_and_exits_1(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs-here"
    r = CliRunner().invoke(
        cli, ["comprehend", str(demo / "skills" / "refund-policy"), "--judge", RUBBER_STAMP, "--calibrate",
              "--output-dir", str(out)],
    )  # fmt: skip
    assert r.exit_code == 1, r.output
    assert "calibration: " in r.output and "put 2 of 6 anchor(s) outside their bands" in r.output
    assert "OUT anchor c2-wrong (case 2): 1.00, band [0.00, 0.34]" in r.output
    assert "knowmeter: grader calibration: 2 of 6 anchor(s) outside their bands (c2-wrong, c7-accepts): " in r.output
    assert not out.exists()  # refused before any task ran


def test_a_users_anchor_file_and_one_clear_line_for_a_bad_one(demo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "anchors.json"
    mine.write_text(json.dumps({"anchors": [{"id": "a", "case": "2", "answer": "No idea.", "band": [0.0, 0.2]}]}))
    assert _calibrate(demo, "scripted-grader", mine) == [("a", 0.0, True)]
    mine.write_text(json.dumps({"anchors": [{"id": "a", "case": "99", "answer": "x", "band": [0, 1]}]}))
    r = CliRunner().invoke(
        cli, ["comprehend", str(demo / "skills" / "refund-policy"), "--judge", "scripted-grader", "--calibrate",
              "--anchors", str(mine)],
    )  # fmt: skip
    assert r.exit_code == 2
    assert f"{mine}: anchor a: case '99' is not a graded case of the eval file (cases: 1, 2, 3, 4, 5)" in r.output
    mine.write_text(json.dumps({"anchors": [{"id": "a", "case": "2", "answer": "x", "band": [0.9, 0.1]}]}))
    r = CliRunner().invoke(
        cli, ["comprehend", str(demo / "skills" / "refund-policy"), "--judge", "scripted-grader", "--calibrate",
              "--anchors", str(mine)],
    )  # fmt: skip
    assert r.exit_code == 2 and "'band' must be [low, high] with 0 ≤ low ≤ high ≤ 1" in r.output


@pytest.mark.slow
def test_flag_grades_anyway_and_the_run_cannot_pass(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = CliRunner().invoke(
        cli, ["comprehend", str(demo / "skills" / "refund-policy"), "--judge", RUBBER_STAMP, "--calibrate",
              "--on-miscalibration", "flag", "--output-dir", str(out)],
    )  # fmt: skip
    report = json.loads(next(out.glob("runs/*/report.json")).read_text())
    verdict = report["comprehension"]["verdict"]
    flag = "grader calibration: 2 of 6 anchor(s) outside their bands (c2-wrong, c7-accepts)"
    assert verdict["caveats"][0] == flag and verdict["level"] != "PASS"
    assert f"caveat: {flag}" in r.output
    run = json.loads(next(out.glob("runs/*/run.json")).read_text())
    assert run["comprehension"]["flags"] == [flag]  # kept with the run: knowmeter report re-decides the same


def test_calibration_flag_is_none_when_every_anchor_lands(demo: Path) -> None:
    results = run_calibration(
        demo / "skills" / "refund-policy", None, ngram=6, judges=["scripted-grader"], judge_repeat=1, anchors=None
    )
    assert calibration_flag(results) is None


def test_lint_leaves_the_anchor_file_beside_the_eval_file_alone(demo: Path) -> None:
    from knowmeter.skillgraph import lint_paths

    result = lint_paths([demo])
    assert result.unreadable == [] and [p.name for p in result.eval_files] == ["refund-policy.json"]
    named = lint_paths([demo / "evals" / "refund-policy.anchors.json"])
    assert named.unreadable == [] and named.anchor_files == [demo / "evals" / "refund-policy.anchors.json"]


def test_a_calibrated_run_records_how_the_calibration_went(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = CliRunner().invoke(
        cli, ["comprehend", str(demo / "skills" / "refund-policy"), "--judge", "scripted-grader", "--calibrate",
              "--output-dir", str(out)],
    )  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    comp = json.loads(next(out.glob("runs/*/report.json")).read_text())["comprehension"]
    assert "calibration: scripted-grader put all 6 anchor(s) in their bands" in comp["notes"]
    assert not any(c.startswith("grader calibration") for c in comp["verdict"]["caveats"])
    assert "note: calibration: scripted-grader put all 6 anchor(s) in their bands" in r.output
