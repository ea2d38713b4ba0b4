"""Mutation check (issue 36 point 6): apply mutations a refactoring could make by mistake to a
temporary copy of the tree — rename a stored field at its producer, drop one option's
pass-through, drop an executor capability — and show that mypy or a targeted test fails for each.

    python -m tests.mutation.check [NAME ...]

Each mutation names the checks that must catch it (``mypy`` and / or pytest node ids); all of
them run on the unmutated copy first (they must pass there, or a "caught" would mean nothing),
then on each mutated copy, two mutations at a time. Prints one line per mutation and the checks
that failed on it; exits 1 when a mutation is caught by none (or no longer applies: the code it
edits changed — update the mutation), else 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MYPY = "mypy"


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` by ``new`` in ``path`` (every occurrence; ``old`` must occur)."""

    path: str
    old: str
    new: str = ""

    def apply(self, tree: Path) -> None:
        file = tree / self.path
        text = file.read_text(encoding="utf-8")
        if self.old not in text:
            raise LookupError(f"{self.path}: {self.old.strip()!r} not found")
        file.write_text(text.replace(self.old, self.new), encoding="utf-8")


@dataclass(frozen=True)
class Rename:
    """Rename the attribute ``old`` to ``new`` at every Python use in ``folders``, as an IDE
    does: the declaration, ``.old`` and ``old=``, but not a string key ``"old"``."""

    old: str
    new: str
    folders: tuple[str, ...] = ("src", "tests", "bench")

    def apply(self, tree: Path) -> None:
        pattern = re.compile(rf"(?<![\"'\w]){re.escape(self.old)}(?![\"'\w])")
        hits = 0
        for folder in self.folders:
            for file in (tree / folder).rglob("*.py"):
                text = file.read_text(encoding="utf-8")
                new, n = pattern.subn(self.new, text)
                if n:
                    hits += n
                    file.write_text(new, encoding="utf-8")
        if not hits:
            raise LookupError(f"{self.old}: no use found")


@dataclass(frozen=True)
class Mutation:
    name: str
    kind: str
    what: str
    changes: tuple[Edit | Rename, ...]
    #: what must catch it: "mypy" or pytest node ids
    catchers: tuple[str, ...]


READERS = "tests/project/test_stored_readers.py"
T_GATES = f"{READERS}::test_each_gap_rate_limit_given_to_the_run_gates_it"
T_JUDGE_COST = f"{READERS}::test_the_judges_cost_a_grade_stores_is_what_progress_resume_and_dry_run_count"
T_GRADE_KEYS = "tests/grading/test_grading_grade.py::test_grade_round_trips_through_json"
T_OVERRIDES = "tests/config/test_flag_passthrough.py::test_every_override_changes_the_run_configuration"
T_REPORT = "tests/cli/test_cli_e2e.py::test_report_overrides_recompute_the_verdict"
T_CAPS = "tests/executors/test_executor_capabilities.py"
COMPAT = "tests/store/test_task_record_compat.py"
T_OLDER_LINES = f"{COMPAT}::test_lines_written_by_an_earlier_version_read_back_as_stored"
T_OLDER_GAPS = f"{COMPAT}::test_the_gap_analysis_an_earlier_version_stored_reads_back_as_stored"
STORED_GAPS = "tests/store/test_stored_gaps.py"
T_DEMO_GAPS = f"{STORED_GAPS}::test_the_stored_gaps_of_a_real_run_are_rebuilt_exactly"
T_GAPS_WRITTEN = f"{STORED_GAPS}::test_a_written_gap_analysis_reads_back_as_built"
T_EXEC_STORED = "tests/runner/test_task_record_written.py::test_every_field_the_executor_returned_is_stored_and_heard"
T_LOCAL = "tests/store/test_run_record.py::test_the_local_settings_are_configuration_fields"
T_OPTIONS = "tests/cli/test_cli_options.py::test_the_click_parameters_are_the_fields_of_the_options_type"
T_COMPREHEND_SETTINGS = (
    "tests/comprehension/test_comprehend_cli.py::test_every_setting_comprehend_takes_reaches_the_stored_run"
)
RENAME, PASS_THROUGH, CAPABILITY = "rename a stored field", "drop a pass-through", "drop a capability"

MUTATIONS = (
    Mutation(
        "A",
        RENAME,
        "RunConfig.max_gap_rate renamed (its declaration and where it is set)",
        (
            Edit("src/knowmeter/config.py", "    max_gap_rate: Annotated", "    gap_rate_limit: Annotated"),
            Edit("src/knowmeter/evaluation.py", " max_gap_rate=_first(", " gap_rate_limit=_first("),
        ),
        (T_GATES,),
    ),
    Mutation(
        "A2",
        RENAME,
        "RunConfig.gap_rate_regression renamed (its declaration and where it is set)",
        (
            Edit("src/knowmeter/config.py", "    gap_rate_regression: Annotated", "    rate_regression: Annotated"),
            Edit("src/knowmeter/evaluation.py", " gap_rate_regression=_first(", " rate_regression=_first("),
        ),
        (T_GATES,),
    ),
    Mutation(
        "A3",
        RENAME,
        "RunConfig.max_gap_rate renamed at its declaration only",
        (Edit("src/knowmeter/config.py", "    max_gap_rate: Annotated", "    gap_rate_limit: Annotated"),),
        (MYPY,),
    ),
    Mutation(
        "A4",
        RENAME,
        "RunConfig.knowledge_dirs renamed at its declaration (stored configs are read by the gaps section, "
        "--control-run, the report)",
        (
            Edit(
                "src/knowmeter/config.py",
                "    knowledge_dirs: list[str] = Field(",
                "    knowledge_folders: list[str] = Field(",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "A5",
        RENAME,
        "RunConfig.shard renamed at its declaration (merge clears it in the merged run's stored config)",
        (
            Edit(
                "src/knowmeter/config.py",
                "    shard: str | None = Field(default=None, pattern",
                "    part: str | None = Field(default=None, pattern",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "A6",
        RENAME,
        "RunConfig.budget_total_usd renamed as an IDE would (every Python use; the plan hash leaves it out by name)",
        (Rename("budget_total_usd", "total_budget_usd"),),
        (T_LOCAL,),
    ),
    Mutation(
        "E",
        RENAME,
        "run.json wall_s renamed at its producer (pipeline.finalize)",
        (
            Edit(
                "src/knowmeter/pipeline.py",
                "        record.wall_s = round((record.wall_s or 0.0) + wall_s, 3)",
                "        record.wall_time_s = round((record.wall_s or 0.0) + wall_s, 3)",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "E2",
        RENAME,
        "run.json tasks_total renamed in its model and at its producer (evaluation.run_record), not its readers",
        (
            Edit(
                "src/knowmeter/store/_runrecord.py",
                "    tasks_total: int = Field(ge=0)\n    judges",
                "    planned: int = Field(ge=0)\n    judges",
            ),
            Edit(
                "src/knowmeter/evaluation.py",
                "        tasks_total=len(prepared.tasks),",
                "        planned=len(prepared.tasks),",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "E3",
        RENAME,
        "run.json variants[].cwd_hash renamed at its producer (evaluation.run_record)",
        (
            Edit(
                "src/knowmeter/evaluation.py",
                "                cwd_hash=directory_fingerprint(",
                "                workspace_hash=directory_fingerprint(",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B",
        RENAME,
        "Grade.judge_cost_usd renamed as an IDE would (every Python use; Grade is the stored type)",
        (Rename("judge_cost_usd", "judges_cost_usd"),),
        (T_JUDGE_COST, T_GRADE_KEYS, T_OLDER_LINES),
    ),
    Mutation(
        "B2",
        RENAME,
        "Grade.judge_error renamed as an IDE would",
        (Rename("judge_error", "judging_error"),),
        (T_GRADE_KEYS,),
    ),
    Mutation(
        "B3",
        RENAME,
        "the stored exec field cost_usd renamed at the record's declaration only",
        (
            Edit(
                "src/knowmeter/store/_taskrecord.py",
                "    cost_usd: Amount | None = None\n",
                "    cost: Amount | None = None\n",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B4",
        RENAME,
        "ExecResult.cost_usd renamed as an IDE would (the exec record, the grade's judges and every reader too)",
        (Rename("cost_usd", "usd_cost", ("src",)),),
        (T_OLDER_LINES,),
    ),
    Mutation(
        "B5",
        RENAME,
        "the exec record builder stores the executor's num_turns no more (its line dropped)",
        (Edit("src/knowmeter/runner/_execute.py", "        num_turns=result.num_turns,\n"),),
        (T_EXEC_STORED,),
    ),
    Mutation(
        "B6",
        RENAME,
        "a gap field (TaskGaps.hedging_dropped) renamed as an IDE would",
        (Rename("hedging_dropped", "hedges_dropped", ("src",)),),
        (MYPY, T_OLDER_GAPS),
    ),
    Mutation(
        "B11",
        RENAME,
        "a gap signal field (GapSignal.occurrences) renamed at its producer as an IDE would",
        (Rename("occurrences", "repeats_seen", ("src",)),),
        (MYPY, T_DEMO_GAPS),
    ),
    Mutation(
        "B12",
        RENAME,
        "the stored gap field hedging_unjudged renamed at its declaration (GapsRecord) only",
        (
            Edit(
                "src/knowmeter/store/_gapsrecord.py",
                "    hedging_unjudged: NotRequired[_Count]\n",
                "    unjudged: NotRequired[_Count]\n",
            ),
        ),
        (MYPY, T_GAPS_WRITTEN),
    ),
    Mutation(
        "B7",
        RENAME,
        "the comprehension grader's cost_usd renamed at its producer (grade_answer's stored result)",
        (
            Edit(
                "src/knowmeter/comprehension/_grade.py",
                "        cost_usd=cost_usd,\n",
                "        judge_cost_usd=cost_usd,\n",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B8",
        RENAME,
        "ComprehensionResult.cost_usd renamed at its declaration only (a resumed run read it as $0 by key)",
        (
            Edit(
                "src/knowmeter/store/_comprehensionrecord.py",
                "    cost_usd: Amount | None\n    graded: bool\n",
                "    grader_cost_usd: Amount | None\n    graded: bool\n",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B9",
        RENAME,
        "a comprehension result field (behavior_pass_fraction) renamed as an IDE would",
        (Rename("behavior_pass_fraction", "pass_fraction", ("src",)),),
        (T_OLDER_LINES,),
    ),
    Mutation(
        "B10",
        RENAME,
        "the activation detection's order renamed at its producer (detect_activations)",
        (
            Edit(
                "src/knowmeter/activation/_detect.py",
                "Detection(skill_tool=tool, read=read, order=tuple(order))",
                "Detection(skill_tool=tool, read=read, loaded=tuple(order))",
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B13",
        RENAME,
        "the page's task view reads the agent's cost under a key the stored record does not have",
        (
            Edit(
                "src/knowmeter/report/_view.py",
                '        cost_usd=ex.get("cost_usd"),\n',
                '        cost_usd=ex.get("cost"),\n',
            ),
        ),
        (MYPY,),
    ),
    Mutation(
        "B14",
        RENAME,
        "a stored grade field (Grade.judge_error) renamed at its declaration only",
        (
            Edit(
                "src/knowmeter/store/_graderecord.py",
                "    judge_error: str | None = None\n",
                "    judging_error: str | None = None\n",
            ),
        ),
        (MYPY, "tests/store/test_task_json.py"),
    ),
    Mutation(
        "C",
        PASS_THROUGH,
        "--stability-limit: its override dropped where the run configuration is resolved",
        (
            Edit(
                "src/knowmeter/evaluation.py",
                "            stability_limit=_first(\n"
                "                ov.stability_limit, gates.stabilityLimit if gates else None, "
                "defaults.STABILITY_LIMIT\n"
                "            ),\n",
            ),
        ),
        (T_OVERRIDES,),
    ),
    Mutation(
        "C2",
        PASS_THROUGH,
        "--max-errors: its override dropped where the run configuration is resolved",
        (Edit("src/knowmeter/evaluation.py", "            max_errors=_first(ov.max_errors, defaults.MAX_ERRORS),\n"),),
        (T_OVERRIDES,),
    ),
    Mutation(
        "C3",
        PASS_THROUGH,
        "report --stability-limit: dropped between knowmeter.rescore and the rebuilt report",
        (Edit("src/knowmeter/api.py", "        stability_limit=stability_limit,\n"),),
        (T_REPORT,),
    ),
    Mutation(
        "F",
        RENAME,
        "--junit's click parameter renamed in its decorator (read by key, eval then wrote no JUnit file)",
        (Edit("src/knowmeter/cli/_output.py", '        "--junit",\n', '        "--junit",\n        "junit_xml",\n'),),
        (T_OPTIONS,),
    ),
    Mutation(
        "F2",
        RENAME,
        "EvalOptions.quiet renamed at its declaration only",
        (
            Edit(
                "src/knowmeter/cli/_options.py",
                "    quiet: bool\n    report_only: bool\n",
                "    silent: bool\n    report_only: bool\n",
            ),
        ),
        (MYPY, T_OPTIONS),
    ),
    Mutation(
        "C4",
        PASS_THROUGH,
        "comprehend --seed: dropped where comprehend hands its settings to knowmeter.comprehend",
        (Edit("src/knowmeter/cli/_comprehend_run.py", "            seed=settings.seed,\n"),),
        (T_COMPREHEND_SETTINGS,),
    ),
    Mutation(
        "D",
        CAPABILITY,
        "the agent CLIs no longer say they stop a task at its timeout themselves",
        (Edit("src/knowmeter/executors/_cli_common.py", "    enforces_timeout = True\n"),),
        (f"{T_CAPS}::test_agent_clis_stop_their_tasks_and_are_refused_a_leaky_workspace",),
    ),
    Mutation(
        "D2",
        CAPABILITY,
        "the script agent no longer says it may work beside the samples (warned, not refused)",
        (Edit("src/knowmeter/executors/_script.py", "    workspace_leak_allowed = True"),),
        (f"{T_CAPS}::test_a_wrapper_that_forwards_nothing_still_has_a_leaky_workspace_refused",),
    ),
    Mutation(
        "D3",
        CAPABILITY,
        "the wrapper executors (budget, Ray) no longer forward sealed",
        (Edit("src/knowmeter/executors/_protocol.py", "        self.sealed = inner.sealed\n"),),
        (f"{T_CAPS}::test_wrappers_forward_every_capability",),
    ),
    Mutation(
        "D4",
        CAPABILITY,
        "sealed dropped from the Executor protocol",
        (Edit("src/knowmeter/executors/_protocol.py", "    sealed: bool | None = None\n"),),
        (MYPY,),
    ),
)


def _copy(dest: Path, *, mypy_cache: bool) -> None:
    """The repository's files (tracked and new, not ignored) in ``dest``; with mypy's cache, so
    its run there is incremental."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    if mypy_cache and (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", dest / ".mypy_cache")


def _run(tree: Path, check: str) -> tuple[bool, str]:
    """Run one check in ``tree``: passed?, and its last line."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}"}
    if check == MYPY:
        cmd = [sys.executable, "-m", "mypy"]
    else:
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *check.split()]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return proc.returncode == 0, (lines[-1] if lines else "")


def _short(check: str) -> str:
    return check if check == MYPY else check.split("::")[-1]


def _checks(catchers: tuple[str, ...]) -> list[str]:
    """mypy, and the node ids grouped in one pytest run."""
    tests = [c for c in catchers if c != MYPY]
    return ([MYPY] if MYPY in catchers else []) + ([" ".join(tests)] if tests else [])


def check(mutation: Mutation, work: Path) -> tuple[bool, str]:
    """Apply ``mutation`` to a copy of the tree and run its catchers: caught?, and the line to print."""
    tree = work / mutation.name
    _copy(tree, mypy_cache=MYPY in mutation.catchers)
    try:
        for change in mutation.changes:
            change.apply(tree)
    except LookupError as exc:
        return False, f"{mutation.name}: NO LONGER APPLIES ({exc}): update the mutation"
    failed = []
    for c in _checks(mutation.catchers):
        passed, last = _run(tree, c)
        if not passed:
            failed.append(f"mypy: {last}" if c == MYPY else f"pytest {', '.join(map(_short, c.split()))}: {last}")
    shutil.rmtree(tree, ignore_errors=True)
    verdict = "caught by " + "; ".join(failed) if failed else "NOT CAUGHT"
    return bool(failed), f"{mutation.name} [{mutation.kind}] {mutation.what}: {verdict}"


def main(argv: list[str], out: Callable[[str], None] = print) -> int:
    chosen = [m for m in MUTATIONS if not argv or m.name in argv]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="knowmeter-mutation-") as tmp:
        work = Path(tmp)
        catchers = tuple(dict.fromkeys(c for m in chosen for c in m.catchers))
        base = work / "unmutated"
        _copy(base, mypy_cache=MYPY in catchers)
        for c in _checks(catchers):
            passed, last = _run(base, c)
            if not passed:
                out(f"unmutated tree: {_short(c)} fails already ({last}); fix that first")
                return 1
        out(f"unmutated tree: every check passes ({len(catchers)} checks)")
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda m: check(m, work), chosen))
    for _, line in results:
        out(line)
    missed = [m.name for m, (caught, _) in zip(chosen, results, strict=True) if not caught]
    out(
        f"{len(chosen) - len(missed)} of {len(chosen)} mutations caught in {time.perf_counter() - started:.0f} s"
        + (f"; not caught: {', '.join(missed)}" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
