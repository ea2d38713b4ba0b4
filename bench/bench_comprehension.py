"""Comprehension grading's deterministic work, benchmarked (prints numbers; not a test).

For ``--cases`` cases (default 1,000) built on the real type-safety skill (the reference files
beside the repository, or ``--skill`` / ``--evals``): each case is built afresh (its behaviors and
verbatim-check sources), gets an agent answer (alternating the research's §5.2 pass and fail
answers, the case number mixed in), the A.3 verbatim check, and the post-checks of a grader reply
in Appendix A's format (parse, RULE-1/9 ids, RULE-2 quotes, RULE-6 hedges) — the target is ≤ 1 s.
Best of ``--runs``.

Source n-grams are cached per text, as in a run (one body per skill, one field per dimension).
``--fresh`` clears that cache before every case: every case re-tokenises a 1,576-word body, the
worst case of 1,000 different skills.

    python bench/bench_comprehension.py [--cases 1000] [--runs 5] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from knowmeter.comprehension import load_inputs, make_case, parse_grader_reply
from knowmeter.skillgraph import source_grams

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "skill-graph"
PASS = (
    "It's the property of a codebase where the compiler catches a category of mistakes — like calling a "
    "function with the wrong shape of input — before users see them. The team pays a cost up-front in writing "
    "type annotations, and the benefit is that whole classes of runtime errors are ruled out at build time."
)
FAIL = (
    "Type safety is the property of a program in which type errors — operations applied to values of the "
    "wrong kind — are detected before they cause incorrect behavior."
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fresh", action="store_true", help="clear the source n-gram cache before every case")
    ap.add_argument("--skill", type=Path, default=REFERENCE / "skills" / "type-safety" / "SKILL.md")
    ap.add_argument("--evals", type=Path, default=REFERENCE / "evals" / "type-safety.json")
    args = ap.parse_args()
    inputs = load_inputs(args.skill, args.evals, n=6)
    base = inputs.cases
    work = []
    for i in range(args.cases):
        c = base[i % len(base)]
        answer = f"Case {i}. " + (FAIL if (i // len(base)) % 2 else PASS)
        quote = " ".join(answer.split()[:5])
        reply = (
            "<verdict>"
            + json.dumps(
                {
                    "behavior_verdicts": [
                        {"id": b.id, "verdict": "PASS", "evidence_quote": quote, "rationale": "shown in the answer"}
                        for b in c.behaviors
                    ]
                }
            )
            + "</verdict>"
        )
        work.append((c, answer, reply))
    times = []
    for _ in range(args.runs):
        source_grams.cache_clear()
        t0 = time.perf_counter()
        failed = 0
        for c, answer, reply in work:
            if args.fresh:
                source_grams.cache_clear()
            case = make_case(
                case_id=c.case_id,
                dimension=c.dimension,
                prompt=c.prompt,
                concept_text=c.concept_text,
                body=c.body,
                behaviors=c.behaviors,
            )  # fresh n-gram sources per case
            failed += not case.overlap(answer).passed
            parse_grader_reply(reply, behaviors=case.behaviors, answer=answer)
        times.append(time.perf_counter() - t0)
    body_words = len(inputs.skill.body.split())
    print(
        f"{args.cases} cases (skill body {body_words} words, {len(base)} distinct cases): verbatim check + "
        f"reply post-checks, sources {'re-tokenised per case' if args.fresh else 'cached per text'}"
    )
    print(
        f"  best {min(times):.3f} s · first {times[0]:.3f} s · {min(times) / args.cases * 1e3:.3f} ms/case · "
        f"{failed} answers failed the verbatim check (the §5.2 fail answer on C1 cases)"
    )


if __name__ == "__main__":
    main()
