"""``eval --sequential`` on the offline demo: the run stops early with PROGRESS, says where and
why, stores what it ran as a complete run, and ``report`` re-decides it at the stopping level."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from knowmeter.cli import cli
from knowmeter.exit_codes import EXIT_INPUT, EXIT_OK
from knowmeter.store import iter_results


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"}, catch_exceptions=False)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert run("init", "d").exit_code == 0
    monkeypatch.chdir(tmp_path / "d")
    return tmp_path / "d"


@pytest.mark.slow
def test_the_demo_stops_early_with_progress_and_says_so(demo: Path) -> None:
    """With obf's spending the demo's one early look (20 of 23 samples, boundary z 2.1) decides;
    Haybittle–Peto's p < 0.001 is not reached there (test below)."""
    r = run("eval", "--sequential-design", "obf")
    assert r.exit_code == EXIT_OK, r.output
    first = " ".join(r.stdout.split("\n\n")[0].split())  # the outcome line, unwrapped
    assert first.startswith("PROGRESS · support-expert vs support-basic")
    assert "sequential: stopped early after 20 of 23 samples" in first
    assert "sequential: stopped at look 1 of 2 after 20 of 23 samples: the answer is clear" in " ".join(
        r.stdout.split()
    )
    (run_dir,) = (demo / ".knowmeter" / "runs").iterdir()
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "complete" and record["tasks_total"] == 40  # 20 samples × 2 variants
    assert len(list(iter_results(run_dir / "results.jsonl"))) == 40
    assert record["sequential"]["stopped"] == "efficacy" and record["sequential"]["planned_samples"] == 23
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    level = record["sequential"]["looks"][0]["nominal_alpha"]
    assert report["statistics"]["config"]["sequential_alpha"] == level
    assert report["run"]["sequential"]["reason"] == record["sequential"]["reason"]
    again = run("report", "latest")
    assert again.exit_code == EXIT_OK and " ".join(again.stdout.split("\n\n")[0].split()) == first
    assert record["sequential"]["design"] == "obf" and not record["sequential"]["futility"]
    # the samples run are the seed's random order, not the file's first 20
    ran = {rec["sample_id"] for rec in iter_results(run_dir / "results.jsonl")}
    in_file = [
        s["sample_id"] for s in yaml.safe_load((demo / "eval-samples.yaml").read_text(encoding="utf-8"))["samples"]
    ]
    assert len(ran) == 20 and ran != set(in_file[:20])


@pytest.mark.slow
def test_a_haybittle_peto_run_to_the_end_has_the_fixed_runs_verdict(demo: Path) -> None:
    """The default design on the demo: at 20 samples the permutation p (0.0013) misses the interim
    p < 0.001, so all 23 run and the last look at alpha gives the fixed run's verdict and numbers."""
    r = run("eval", "--sequential")
    assert r.exit_code == EXIT_OK, r.output
    fixed = run("eval", "--no-cache")
    assert fixed.exit_code == EXIT_OK, fixed.output
    runs = sorted((demo / ".knowmeter" / "runs").iterdir())
    seq, whole = (json.loads((d / "report.json").read_text(encoding="utf-8")) for d in runs)
    looks = seq["run"]["sequential"]["looks"]
    assert [look["samples"] for look in looks] == [20, 23] and looks[0]["stop"] is None
    assert looks[-1]["nominal_alpha"] == 0.05  # the fixed test's alpha, exactly
    assert seq["run"]["sequential"]["stopped"] == "planned_n"  # a decided last look is no early stop
    assert "sequential: all 23 samples run" in " ".join(r.stdout.split())
    assert seq["verdict"]["level"] == whole["verdict"]["level"] == "PROGRESS"
    assert seq["comparisons"] == whole["comparisons"]  # the same tests, p-values and intervals


def test_sequential_refuses_a_shard(demo: Path) -> None:
    r = run("eval", "--sequential", "--shard", "1/2")
    assert r.exit_code == EXIT_INPUT
    assert "--sequential needs a control and a treatment and the whole plan (no --shard)" in r.output


@pytest.mark.slow
def test_a_killed_sequential_run_resumes_its_looks(demo: Path) -> None:
    """Kill it during its last batch (the batch's last tasks and its look lost): --resume runs
    only those tasks, takes that look again and stops where the whole run stopped."""
    assert run("eval", "-q", "--sequential-design", "obf", "--min-pairs", "5").exit_code == EXIT_OK
    (run_dir,) = (demo / ".knowmeter" / "runs").iterdir()
    whole = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert whole["sequential"]["look_samples"] == [5, 10, 15, 20, 23] and whole["sequential"]["stopped"] == "efficacy"
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:-4]), encoding="utf-8")
    killed = dict(whole, status="interrupted", tasks_total=46)
    killed["sequential"] = dict(whole["sequential"], looks=whole["sequential"]["looks"][:-1], stopped=None, reason=None)
    (run_dir / "run.json").write_text(json.dumps(killed), encoding="utf-8")
    r = run("eval", "--resume", run_dir.name)
    assert r.exit_code == EXIT_OK, r.output
    resumed = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert resumed["sequential"] == whole["sequential"] and resumed["tasks_total"] == whole["tasks_total"]
    again = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(again) == len(lines)  # only the 4 lost tasks ran again
    assert {json.loads(x)["task_id"] for x in again} == {json.loads(x)["task_id"] for x in lines}
    assert "sequential: stopped at look" in " ".join(r.output.split())


def test_each_batch_holds_every_variant_and_repeat_of_its_samples(demo: Path) -> None:
    from knowmeter.evaluation import Overrides, prepare, resolve_config
    from knowmeter.sequential import sequential_batches

    prepared = prepare(resolve_config(Overrides(repeat=2, min_pairs=5, sequential=True), demo))
    record, batches = sequential_batches(prepared)
    assert record.look_samples == [5, 8, 11, 14, 17, 20, 23]
    assert [len(b) for b in batches] == [20, 12, 12, 12, 12, 12, 12]  # samples × 2 variants × 2 repeats
    assert sorted(t.id for b in batches for t in b) == sorted(t.id for t in prepared.tasks)
    for batch in batches:
        samples = {t.sample.sample_id for t in batch}
        assert {(t.sample.sample_id, t.variant.name, t.repeat) for t in batch} == {
            (s, v.name, r) for s in samples for v in prepared.variants for r in (0, 1)
        }
    _, again = sequential_batches(prepare(resolve_config(Overrides(repeat=2, min_pairs=5, sequential=True), demo)))
    assert [[t.id for t in b] for b in again] == [[t.id for t in b] for b in batches]  # fixed by the seed
    other = prepare(resolve_config(Overrides(repeat=2, min_pairs=5, sequential=True, seed=7), demo))
    assert [t.id for t in sequential_batches(other)[1][0]] != [t.id for t in batches[0]]  # the seed's order


def test_the_design_and_futility_flags_choose_the_looks(demo: Path) -> None:
    """``--sequential-design obf`` looks every fifth of the samples; either flag (or its eval.yaml
    key) asks for a sequential run; a design that does not exist is one clear line."""
    from knowmeter.evaluation import Overrides, prepare, resolve_config
    from knowmeter.sequential import sequential_batches

    obf = prepare(resolve_config(Overrides(min_pairs=5, sequential_design="obf"), demo))
    record, _ = sequential_batches(obf)
    assert obf.config.sequential and record.design == "obf" and record.look_samples == [5, 10, 15, 20, 23]
    assert record.method.startswith("group-sequential, Lan–DeMets")
    futile = prepare(resolve_config(Overrides(futility=True), demo))
    assert futile.config.sequential and futile.config.futility and sequential_batches(futile)[0].futility
    text = (demo / "eval.yaml").read_text(encoding="utf-8")
    (demo / "eval.yaml").write_text(text + "\nsequentialDesign: obf\n", encoding="utf-8")
    assert resolve_config(Overrides(), demo).sequential_design == "obf"
    r = run("eval", "--sequential-design", "pocock")
    assert r.exit_code != EXIT_OK and "pocock" in r.output and "Traceback" not in r.output


BROKEN = """\
import json, sys
json.load(sys.stdin)
sys.stderr.write("Error: ANTHROPIC_API_KEY is not set\\n")
sys.exit(1)
"""


@pytest.mark.slow
def test_a_broken_agent_halts_a_sequential_run_before_its_first_look(demo: Path) -> None:
    (demo / "agent.py").write_text(BROKEN, encoding="utf-8")
    r = run("eval", "-q", "--sequential", "--executor", f"{sys.executable} agent.py", "--retry", "0")
    assert r.exit_code != EXIT_OK
    (run_dir,) = (demo / ".knowmeter" / "runs").iterdir()
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    done = len(list(iter_results(run_dir / "results.jsonl")))
    assert record["status"] == "halted" and "sequential" not in record  # no look on nothing measured
    assert record["halted"]["tasks_not_started"] == 46 - done  # the later batches' tasks too
