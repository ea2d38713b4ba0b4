"""``knowmeter comprehend`` end to end, offline: the type-safety worked example (real Skill Graph
files) with the offline agent and the scripted grader, the two arms' requests, --resume,
--write-state, a grader whose replies are unusable (UNVERIFIED, nothing stored lost), and answers
that are not there (FAIL, not ungraded) — the command's exit code always the stored decision's."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from knowmeter.report import joined_report
from tests.support.cli import init_demo, km_process, km_started
from tests.support.held import HELD_AGENT

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("grader_script.py")

#: an agent (script protocol) that records every request it receives and answers with the prompt
RECORDER = """\
import json, pathlib, sys
req = json.load(sys.stdin)
with open(pathlib.Path(__file__).with_name("requests.jsonl"), "a") as fh:
    fh.write(json.dumps(req) + "\\n")
print(json.dumps({"output": "Answer: " + req["prompt"][:40], "costUSD": 0.0}))
"""


def km(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowmeter", "comprehend", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path, skill_graph: Path) -> Path:
    """A Skill Graph–shaped repo: the v4 type-safety skill with its v8 audit-state.json sidecar,
    and the research's worked-example eval file."""
    skill = tmp_path / "skills" / "type-safety"
    skill.mkdir(parents=True)
    shutil.copy(skill_graph / "skills" / "type-safety" / "SKILL.md", skill / "SKILL.md")
    shutil.copy(skill_graph / "comprehension-json" / "type-safety" / "audit-state.json", skill / "audit-state.json")
    (tmp_path / "evals").mkdir()
    shutil.copy(skill_graph / "evals" / "type-safety.json", tmp_path / "evals" / "type-safety.json")
    return tmp_path


ARGS = ("skills/type-safety/SKILL.md", "--evals", "evals/type-safety.json")


def test_type_safety_worked_example_runs_end_to_end_offline(project: Path) -> None:
    r = km(*ARGS, "--judge", "scripted-grader", cwd=project)
    assert r.returncode == 1, r.stderr  # SHALLOW is not a pass
    out = r.stdout
    assert "agent: offline — deterministic offline agent, not an LLM" in out
    assert "grader: scripted-grader — deterministic scripted grader, not an LLM" in out
    assert "verdict: SHALLOW" in out and "named exceptions: failing C1" in out
    assert "· 1 repeat(s) per case and arm × 1 grader call(s) per answer" in out.splitlines()[0]
    report = joined_report(next((project / ".knowmeter" / "runs").glob("*/report.json")).parent)
    comp = report["comprehension"]
    assert list(comp["dimensions"]) == [f"C{i}" for i in range(1, 10)]
    assert len(report["tasks"]) == 20 and comp["ungraded"] == []
    c1 = next(c for c in comp["cases"] if c["case_id"] == "1")
    with_skill = c1["with_skill"][0]
    # the offline agent answers with the skill's own sentences: the verbatim check fails C1
    assert with_skill["overlap_ngrams"] and with_skill["verdict"] == "FAIL"
    verbatim = next(b for b in with_skill["behaviors"] if b["id"] == "no_verbatim_span")
    assert verbatim["verdict"] == "FAIL" and verbatim["override"].startswith("verbatim check failed")
    verdict = comp["verdict"]
    assert verdict["level"] == "SHALLOW" and "C1" in verdict["failing_dimensions"]
    assert report["decision"]["outcome"] == "SHALLOW" and report["exit_code"] == 1  # the run's one decision
    assert 0 <= verdict["eval_score"] <= 5 and "1" in verdict["eval_failed_ids"]
    assert report["run"]["prompt_hashes"] == {"comprehension_grader": comp["grader_prompt_hash"]}
    paired = comp["overall"]["paired"]
    assert paired["cases_paired"] == 10 and paired["mcnemar"]["n_pairs"] == 10
    assert paired["behavior_fraction_difference"]["n_clusters"] == 10
    # without --write-state the sidecar is untouched
    state = json.loads((project / "skills" / "type-safety" / "audit-state.json").read_text())
    assert state["comprehension_verdict"] == "UNVERIFIED"


def _requests(project: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (project / "requests.jsonl").read_text().splitlines()]


def test_the_two_arms_differ_by_the_skill_and_nothing_else(project: Path) -> None:
    (project / "agent.py").write_text(RECORDER)
    agent = f"{sys.executable} {project / 'agent.py'}"
    r = km(*ARGS, "--judge", "scripted-grader", "--executor", agent, "--model", "m1", "--no-cache", cwd=project)
    assert r.returncode in (0, 1), r.stderr
    requests = _requests(project)
    skill_text = (project / "skills" / "type-safety" / "SKILL.md").read_text()
    with_skill = [q for q in requests if q["system"] is not None]
    baseline = [q for q in requests if q["system"] is None]
    assert len(with_skill) == len(baseline) == 10
    assert all(q["system"] == skill_text for q in with_skill)
    strip = sorted(json.dumps({k: v for k, v in q.items() if k != "system"}, sort_keys=True) for q in requests)
    assert strip[0::2] == strip[1::2]  # pairwise identical once the skill is taken out
    # and on the ExecRequest the runner builds for each arm
    from knowmeter.comprehension import Target, make_config, prepare_comprehension
    from knowmeter.runner import Budget, ExecutionSettings, build_request

    target = Target(ARGS[0], ARGS[2], 6)
    plan = prepare_comprehension(
        make_config(
            base_dir=project,
            target=target,
            executor="offline",
            model="m1",
            judges=["scripted-grader"],
            repeat=2,
            judge_repeat=1,
        ),
        target,
    )
    built = [build_request(t, ExecutionSettings(model="m1"), Budget()) for t in plan.prepared.tasks]
    assert len(built) == 40
    for base, skill in zip(built[0::2], built[1::2], strict=True):
        assert base.system is None and base.skill is None and skill.system == skill_text
        assert skill.skill is not None and skill.skill.text == skill_text and skill.skill.source_dir is None
        same = ("sample_id", "prompt", "model", "workspace", "timeout_s", "max_cost_usd", "env")
        assert all(getattr(base, f) == getattr(skill, f) for f in same)
        # both arms work in an empty folder: the baseline cannot read the skill from disk
        assert base.workspace == project / ".knowmeter" / "comprehension-workspace"
        assert base.workspace is not None and not any(base.workspace.iterdir())
        assert base.task_id.replace("::baseline::", "::with-skill::") == skill.task_id


def test_resume_runs_only_the_missing_tasks(project: Path) -> None:
    assert km(*ARGS, "--judge", "scripted-grader", cwd=project).returncode == 1
    run = next((project / ".knowmeter" / "runs").iterdir())
    results = run / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[:12]))  # as if killed after 12 tasks
    r = km("--resume", run.name, "--judge", "scripted-grader", cwd=project)
    assert r.returncode == 1, r.stderr
    assert f"resuming run {run.name}: 8 of 20 tasks left" in r.stderr
    report = joined_report(run)
    assert len(report["tasks"]) == 20 and report["comprehension"]["verdict"]["level"] == "SHALLOW"
    # knowmeter report re-decides it from the stored results alone
    again = subprocess.run(
        [sys.executable, "-m", "knowmeter", "report", run.name, "--seed", "7"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 1 and "verdict: SHALLOW" in again.stdout, again.stderr
    rebuilt = joined_report(run)["comprehension"]
    assert rebuilt["settings"]["seed"] == 7 and rebuilt["verdict"] == report["comprehension"]["verdict"]


def test_write_state_updates_only_the_fields_it_owns(project: Path) -> None:
    path = project / "skills" / "type-safety" / "audit-state.json"
    before = json.loads(path.read_text())
    r = km(*ARGS, "--judge", "scripted-grader", "--write-state", cwd=project)
    assert r.returncode == 1, r.stderr
    after = json.loads(path.read_text())
    owned = {"comprehension_verdict", "eval_score", "eval_failed_ids", "eval_last_run"}
    # every other field kept
    assert {k: v for k, v in after.items() if k not in owned} == {k: v for k, v in before.items() if k not in owned}
    assert list(after)[: len(before)] == list(before)  # in its order
    assert after["comprehension_verdict"] == "SHALLOW" and "1" in after["eval_failed_ids"]
    run = after["eval_last_run"]
    assert run["status"] == "fail" and len(run["receipt_hash"]) == 64
    assert "model" not in run  # the scripted grader is no LLM; the agent's model is not the grader's
    assert run["receipt"].startswith("../../.knowmeter/runs/") and run["receipt"].endswith("/report.json")
    assert after["eval_score"] == 0.5  # 1 of 10 cases pass with the skill: 5 × 0.1
    assert "audit-state:" in r.stderr
    # the reference sidecar's own application_verdict (no longer in the schema) is kept, and named
    assert "warning: additionalProperty: `application_verdict`" in r.stderr


def test_unusable_grader_replies_leave_the_skill_unverified_and_keep_the_run(project: Path) -> None:
    state = project / "skills" / "type-safety" / "audit-state.json"
    before = state.read_text()
    r = km(*ARGS, "--judge", f"{sys.executable} {SCRIPT} not-json", "--write-state", cwd=project)
    run = next((project / ".knowmeter" / "runs").iterdir())
    report = joined_report(run)
    # a grader reply that broke the rules twice is bad input (issue 13 item 8): exit 2 with one
    # line naming the file and the case — and the command, report.json and knowmeter report agree
    assert r.returncode == report["decision"]["exit_code"] == 2, r.stderr
    assert report["decision"]["outcome"] == "UNVERIFIED" and report["decision"]["passed"] is False
    errors = [line for line in r.stderr.splitlines() if line.startswith("knowmeter: error:")]
    assert len(errors) == 1 and f"{run / 'results.jsonl'}: case 1 (C1, baseline, repeat 0): " in errors[0]
    assert "unusable judge reply" in errors[0] and "20 answer(s) in all" in errors[0]
    again = km_process("report", run.name, cwd=project)
    assert again.returncode == 2 and "verdict: UNVERIFIED" in again.stdout, again.stderr
    assert len((run / "results.jsonl").read_text().splitlines()) == 20
    ungraded = report["comprehension"]["ungraded"]
    assert len(ungraded) == 20 and "case 1 (C1, baseline, repeat 0): " in ungraded[0]
    assert "unusable judge reply: no JSON verdict" in ungraded[0]
    # the sidecar keeps its verdict: an ungraded run says nothing about the skill
    assert state.read_text() == before
    assert f"audit-state: {state}: not written: 20 answer(s) left ungraded" in r.stderr


#: 12 C2 cases of the demo's refund-policy skill, one positive behavior each (the audit's setup)
REFUND_EVALS = {
    "skill_name": "refund-policy",
    "subject": "refunds",
    "evals": [
        {
            "id": i,
            "prompt": f"Case {i}: a customer has an open bank dispute and wants a refund. What happens?",
            "comprehension_dimension": "C2",
            "concept_field": "mental_model",
            "transfer": "near",
            "expected_behaviors": [
                {
                    "id": "checks_dispute_first",
                    "kind": "positive",
                    "description": "Says the open dispute freezes any refund until the bank rules",
                }
            ],
        }
        for i in range(1, 13)
    ],
}

#: answers right with the skill on cases 1-8, nothing on 9-10, fails (exit 1) on 11-12; without
#: the skill it cannot say, and on case 1 it answers nothing
UNANSWERING = """import json, re, sys
req = json.load(sys.stdin)
n = int(re.search(r"Case (\\d+)", req["prompt"]).group(1))
if req["system"] is None:
    out = "" if n == 1 else "I am not able to say."
elif n <= 8:
    out = "The open dispute freezes any refund until the bank rules on it."
elif n <= 10:
    out = "  \\n "
else:
    sys.exit(1)
print(json.dumps({"output": out, "costUSD": 0.0}))
"""


def test_unanswered_cases_fail_in_both_arms_and_every_exit_code_agrees(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "demo")
    skill = demo / "comprehension" / "skills" / "refund-policy"
    state = {"skill": "refund-policy", "comprehension_verdict": "UNVERIFIED"}
    (skill / "audit-state.json").write_text(json.dumps(state))
    (demo / "evals.json").write_text(json.dumps(REFUND_EVALS))
    (demo / "agent.py").write_text(UNANSWERING)
    agent = f"{sys.executable} {demo / 'agent.py'}"
    r = km(
        str(skill / "SKILL.md"),
        "--evals",
        "evals.json",
        "--judge",
        "scripted-grader",
        "--executor",
        agent,
        "--no-cache",
        "--retry",
        "0",
        "--write-state",
        cwd=demo,
    )
    run = next((demo / ".knowmeter" / "runs").iterdir())
    report = joined_report(run)
    comp = report["comprehension"]
    verdict = comp["verdict"]
    # 8 of 12 answered right with the skill: SHALLOW, not PROVISIONAL with eval_score 5 and no failed id
    assert (verdict["level"], verdict["eval_score"]) == ("SHALLOW", 3.33), verdict
    assert verdict["eval_failed_ids"] == ["9", "10", "11", "12"] and comp["ungraded"] == []
    assert comp["overall"]["with_skill"]["cases_graded"] == 12
    assert r.returncode == report["decision"]["exit_code"] == 1, r.stderr
    again = km_process("report", run.name, cwd=demo)
    assert again.returncode == 1 and "verdict: SHALLOW" in again.stdout, again.stderr
    cases = {c["case_id"]: c for c in comp["cases"]}
    why = {n: cases[n]["with_skill"][0]["behaviors"][0]["rationale"] for n in ("9", "10", "11", "12")}
    assert why["9"] == why["10"] == "no answer: the output is empty"
    assert why["11"].startswith("no answer: the agent failed: ") and "exited with 1" in why["11"]
    assert cases["1"]["baseline"][0]["behaviors"][0] | {"override": None} == {
        "id": "checks_dispute_first",
        "verdict": "FAIL",
        "evidence_quote": None,
        "rationale": "no answer: the output is empty",
        "override": None,
        "review": None,
    }
    # no grader was asked about an answer that is not there
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    unanswered = [rec for rec in records if "no answer" in json.dumps(rec["comprehension"]["behavior_verdicts"])]
    assert len(unanswered) == 5 and all(rec["comprehension"]["calls"] == [] for rec in unanswered)
    state = json.loads((skill / "audit-state.json").read_text())
    assert state["comprehension_verdict"] == "SHALLOW" and state["eval_failed_ids"] == ["9", "10", "11", "12"]
    assert state["eval_score"] == 3.33 and state["skill"] == "refund-policy"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda p: (p / "evals" / "type-safety.json").write_text(
                (p / "evals" / "type-safety.json")
                .read_text()
                .replace('"skill_name": "type-safety"', '"skill_name": "api-design"')
            ),
            "is not the skill 'type-safety'",
        ),
        (
            lambda p: (p / "evals" / "type-safety.json").write_text(
                (p / "evals" / "type-safety.json")
                .read_text()
                .replace('"comprehension_dimension": "C9"', '"comprehension_dimension": "C10"')
            ),
            "C10",
        ),
        (lambda p: (p / "skills" / "type-safety" / "SKILL.md").write_text("# no frontmatter\n"), "SKILL.md"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(project: Path, mutate: Any, message: str) -> None:
    mutate(project)
    r = km(*ARGS, "--judge", "scripted-grader", cwd=project)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("knowmeter: error:") and message in lines[0]


def test_no_grader_is_a_usage_error(project: Path) -> None:
    r = km(*ARGS, cwd=project)
    assert r.returncode == 2 and "comprehend needs a grader" in r.stderr


def test_grader_calls_are_charged_to_the_budget(project: Path) -> None:
    (project / "agent.py").write_text(RECORDER.replace('"costUSD": 0.0', '"costUSD": 0.01'))
    agent = f"{sys.executable} {project / 'agent.py'}"
    r = km(
        *ARGS,
        "--judge",
        f"{sys.executable} {SCRIPT} costly",
        "--executor",
        agent,
        "--budget-usd",
        "0.3",
        "--concurrency",
        "1",
        cwd=project,
    )
    assert r.returncode == 1, r.stderr
    run = next((project / ".knowmeter" / "runs").iterdir())
    report = joined_report(run)
    budget = report["run"]["budget"]
    assert budget["spent_known_usd"] <= 0.3 + 1e-9
    assert budget["calls"]["grader"]["known_cost"] >= 1 and budget["calls"]["agent"]["known_cost"] >= 1
    assert report["run"]["tasks_done"] < 20 or report["comprehension"]["ungraded"]


def test_a_run_the_budget_stopped_says_so_and_writes_no_state(project: Path) -> None:
    """An incomplete run's verdict rests on the tasks that happened to run: the terminal (and
    knowmeter report) names the outcome that decides the exit code, and --write-state refuses."""
    state = project / "skills" / "type-safety" / "audit-state.json"
    before = state.read_text()
    (project / "agent.py").write_text(RECORDER.replace('"costUSD": 0.0', '"costUSD": 0.1'))
    agent = f"{sys.executable} {project / 'agent.py'}"
    r = km(*ARGS, "--judge", "scripted-grader", "--executor", agent, "--budget-usd", "1.45", "--concurrency", "1",
           "--write-state", cwd=project)  # fmt: skip
    run = next((project / ".knowmeter" / "runs").iterdir())
    report = joined_report(run)
    decision = report["decision"]
    assert decision["outcome"] == "INCOMPLETE" and r.returncode == decision["exit_code"] == 1, r.stderr
    assert f"outcome: {decision['headline']} · exit code 1" in r.stdout.splitlines()
    assert state.read_text() == before
    assert f"audit-state: {state}: not written: {decision['blockers'][0]['message']}" in r.stderr
    # the eval's dimensions the budget left without an answer are unverified, not "not covered"
    verdict = report["comprehension"]["verdict"]
    graded = set(report["comprehension"]["dimensions"])
    not_run = [f"C{i}" for i in range(1, 10) if f"C{i}" not in graded]
    assert not_run and verdict["not_covered_dimensions"] == []
    assert set(not_run) <= set(verdict["unverified_dimensions"])
    assert f"dimensions of the eval with no answer stored (the run is incomplete): {', '.join(not_run)}" in r.stdout
    assert f"unverified {', '.join(verdict['unverified_dimensions'])}" in r.stdout
    again = km_process("report", run.name, cwd=project)
    assert again.returncode == 1 and f"outcome: {decision['headline']} · exit code 1" in again.stdout
    # the advice names the command that resumes a comprehension run, and it finishes the run
    assert f"finish it with knowmeter comprehend --resume {run.name} --budget-usd TOTAL" in decision["recommendation"]
    finished = km("--resume", run.name, "--budget-usd", "10", cwd=project)
    assert joined_report(run)["run"]["status"] == "complete", finished.stderr


def test_write_state_without_a_sidecar_is_refused_before_anything_runs(project: Path) -> None:
    """A v8 skill with no audit-state.json to update: one line, exit 2, and no task run (it was
    refused only after the whole run, every agent and grader call paid for)."""
    state = project / "skills" / "type-safety" / "audit-state.json"
    state.unlink()
    skill = project / "skills" / "type-safety" / "SKILL.md"
    skill.write_text(
        skill.read_text().replace("schema_version: 4\n", "schema_version: 4\nsubject: quality-assurance\n", 1)
    )
    r = km(*ARGS, "--judge", "scripted-grader", "--write-state", cwd=project)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "knowmeter: error: skills/type-safety/audit-state.json: no audit-state.json beside the SKILL.md of a v8 skill"
    )
    assert not (project / ".knowmeter" / "runs").exists() and not state.exists()


def test_write_state_on_a_v4_skill_without_a_sidecar_writes_its_frontmatter(project: Path, skill_graph: Path) -> None:
    """A v4 skill keeps its eval receipt in the frontmatter (Skill Graph v0.5.6): written there, and
    the SKILL.md still validates against the v4 schema."""
    import jsonschema
    import yaml

    (project / "skills" / "type-safety" / "audit-state.json").unlink()
    r = km(*ARGS, "--judge", "scripted-grader", "--write-state", cwd=project)
    assert r.returncode == 1, r.stderr  # SHALLOW
    assert "eval_last_run written (v4 has no field for the verdict SHALLOW" in r.stderr
    front = yaml.safe_load((project / "skills" / "type-safety" / "SKILL.md").read_text().split("---\n")[1])
    schema = json.loads((skill_graph / "schemas" / "v0.5.6-skill.v4.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(front, default=str)), schema)
    assert front["eval_last_run"]["status"] == "fail" and front["eval_last_run"]["receipt"].endswith("/report.json")


def test_write_state_on_a_v3_skill_is_refused_before_anything_runs(project: Path, skill_graph: Path) -> None:
    """The real documentation skill is schema_version 3: its schema has no eval_last_run, so the
    receipt was written where Skill Graph's lint rejects it. Now: one line naming the file and the
    fix, exit 2, no task run and the SKILL.md byte for byte as it was."""
    folder = project / "skills" / "documentation"
    folder.mkdir()
    shutil.copy(skill_graph / "skills" / "documentation" / "SKILL.md", folder / "SKILL.md")
    shutil.copy(skill_graph / "evals" / "comprehension.json", project / "evals" / "comprehension.json")
    before = (folder / "SKILL.md").read_bytes()
    r = km("skills/documentation", "--evals", "evals/comprehension.json", "--judge", "scripted-grader",
           "--write-state", cwd=project)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "knowmeter: error: skills/documentation/SKILL.md: schema_version 3 frontmatter has no field for an eval receipt"
    )
    assert (folder / "SKILL.md").read_bytes() == before and not (project / ".knowmeter" / "runs").exists()


def test_sigterm_keeps_the_answers_and_names_the_comprehend_resume(project: Path) -> None:
    """A comprehension run stopped mid-way prints what is stored and the command that resumes it
    (it printed only 'knowmeter: interrupted'), exits 143, and that command finishes it."""
    (project / "agent.py").write_text(HELD_AGENT)
    (project / "hold").touch()
    agent = f"{sys.executable} {project / 'agent.py'}"
    proc = km_started("comprehend", *ARGS, "--judge", "scripted-grader", "--executor", agent, "--concurrency", "1",
                      cwd=project)  # fmt: skip
    deadline = time.monotonic() + 120
    while (
        not list(project.glob(".knowmeter/runs/*/results.jsonl"))
        or len(next(project.glob(".knowmeter/runs/*/results.jsonl")).read_text().splitlines()) < 3
    ):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never stored three tasks"
        time.sleep(0.1)
    run = next(project.glob(".knowmeter/runs/*"))
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    (project / "hold").unlink()
    assert proc.returncode == 143, err
    assert (
        f"interrupted by SIGTERM: 3/20 tasks are stored; continue with: knowmeter comprehend --resume {run.name}" in err
    )
    assert "outcome: INCOMPLETE" in out and (run / "report.html").is_file()
    finished = km("--resume", run.name, cwd=project)
    assert finished.returncode in (0, 1), finished.stderr
    assert joined_report(run)["run"]["status"] == "complete"


def test_a_secret_in_the_agent_command_is_not_stored_and_resume_takes_it_back(project: Path) -> None:
    secret = "sk-comprehend-5d1f2a9b7c"
    (project / "agent.py").write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        "sys.exit(3) if '--token' not in sys.argv or sys.argv[-1] == '[redacted]' else None\n"
        'print(json.dumps({"output": "Answer: use unknown", "costUSD": 0.0}))\n'
    )
    command = f"{sys.executable} {project / 'agent.py'} --token {secret}"
    (project / "eval.yaml").write_text(f"executor: '{command}'\n")  # where a resume takes it back from
    first = km(*ARGS, "--executor", command, "--judge", "scripted-grader", cwd=project)
    assert first.returncode == 1, first.stderr
    run = next((project / ".knowmeter" / "runs").iterdir())
    assert secret not in (run / "run.json").read_text() + (run / "results.jsonl").read_text()
    results = run / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:12]))
    r = km("--resume", run.name, "--judge", "scripted-grader", cwd=project)
    assert r.returncode == 1 and "8 of 20 tasks left" in r.stderr, r.stderr
    stored = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(stored) == 20 and not any(rec["exec"].get("error") for rec in stored)  # the real command ran


#: each comprehend setting given on the command line, and where and how run.json's config stores it
SETTINGS = {
    "model": (["--model", "m-1"], "model", "m-1"),
    "executor_options": (["-O", "temperature=0"], "executor_options", {"temperature": 0}),
    "concurrency": (["--concurrency", "3"], "concurrency", 3),
    "timeout_s": (["--timeout", "30"], "timeout_s", 30.0),
    "retry": (["--retry", "2"], "retry", 2),
    "no_cache": (["--no-cache"], "no_cache", True),
    "budget_usd": (["--budget-usd", "5"], "budget_total_usd", 5.0),
    "seed": (["--seed", "11"], "seed", 11),
    "output_dir": (["--output-dir", "elsewhere"], "output_dir", "elsewhere"),
}


def test_every_setting_comprehend_takes_reaches_the_stored_run(tmp_path: Path) -> None:
    """comprehend hands each of its settings on by name (issue 36): one dropped there is ignored
    silently, so each is given here and read back from run.json. The demo's skill (files of the
    repository: the mutation check runs it in a copy of the tree)."""
    from knowmeter.settings import COMPREHEND, settings_of

    project = init_demo(tmp_path) / "comprehension"
    args = [a for name in settings_of(COMPREHEND) for a in SETTINGS[name][0]]
    r = km("skills/refund-policy", "--judge", "scripted-grader", *args, cwd=project)
    assert r.returncode in (0, 1), r.stderr
    config = json.loads(next((project / "elsewhere" / "runs").glob("*/run.json")).read_text())["config"]
    assert {key: config[key] for _, key, _ in SETTINGS.values()} == {key: v for _, key, v in SETTINGS.values()}
