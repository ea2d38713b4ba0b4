"""An activation run end to end with the offline agent, benchmarked (prints numbers; not a test).

``--cases`` cases (default 1,000) made from the real Skill Graph skills' ``examples`` /
``anti_examples`` (the reference files beside the repository), each with the other three skills
installed as distractors, × ``--repeat`` (default 3) trials: the plan, the runner (one sandboxless
offline task each), the trace detection, then the report (figures, F1 bootstrap, confusion list,
activation.json and .html) rebuilt from the stored results alone. Prints tasks per second and
the report's time, best of ``--runs``.

    python bench/bench_activation.py [--cases 1000] [--repeat 3] [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from knowmeter.activation import Target, activation_report, run_activation
from knowmeter.store import RunDir

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "skill-graph" / "skills"
SKILLS = ("a11y", "debugging", "documentation", "type-safety")


def _cases(n: int, skill: str) -> list[dict[str, object]]:
    fm = yaml.safe_load((REFERENCE / skill / "SKILL.md").read_text().split("---\n")[1])
    pool = [(p, True) for p in fm["examples"]] + [(p, False) for p in fm["anti_examples"]]
    others = [s for s in SKILLS if s != skill]
    return [
        {
            "id": f"c{i}",
            "prompt": f"{pool[i % len(pool)][0]} (ticket {i})",
            "should_trigger": pool[i % len(pool)][1],
            "distractors": others,
        }
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skill", default="debugging", choices=SKILLS)
    args = ap.parse_args()
    best_run = best_report = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "cases.yaml").write_text(yaml.safe_dump(_cases(args.cases, args.skill)))
        for _ in range(args.runs):
            started = time.perf_counter()
            run_dir, report = run_activation(
                Target(skill=str(REFERENCE / args.skill), case_files=("cases.yaml",), skills_dirs=(str(REFERENCE),)),
                base_dir=root,
                executor="offline",
                repeat=args.repeat,
                no_cache=True,
                output_dir=str(root / "out"),
            )
            best_run = min(best_run, time.perf_counter() - started)
            started = time.perf_counter()
            activation_report(RunDir(run_dir.path))
            best_report = min(best_report, time.perf_counter() - started)
    tasks = args.cases * args.repeat
    arm = report.arms[0]
    print(f"activation, offline agent: {args.cases} cases × {args.repeat} repeats = {tasks} tasks, skill {args.skill}")
    print(
        f"  run (plan + tasks + detection + report): {best_run:.2f} s best of {args.runs}"
        f" = {tasks / best_run:,.0f} tasks/s"
    )
    print(f"  report from stored results: {best_report:.2f} s")
    print(
        f"  recall {arm.recall.rate:.3f} [{arm.recall.low:.3f}, {arm.recall.high:.3f}], "
        f"false activations {arm.false_activation_rate.rate:.3f}, confusion list {len(arm.confusion)} case(s)"
    )


if __name__ == "__main__":
    main()
