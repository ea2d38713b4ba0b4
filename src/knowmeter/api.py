"""knowmeter's Python API and its one orchestration layer: the command line parses its flags,
calls one of these functions and prints what it returns.

``evaluate`` sequences the stages of ``knowmeter.evaluation`` (configuration → plan → run.json →
execute) and ``knowmeter.pipeline`` (grade and analyze each task; compare → decide → store);
``resume`` continues a stored run the same way; ``rescore`` re-decides a stored run from its
results; ``merge`` makes one run of the shards of one plan; ``generate_probe_set`` drafts
competency questions from a knowledge base's structure; ``observe_traces`` measures skill
health from usage traces (``knowmeter.observe`` is the package's name, so the function has its
own). Bad input raises ``InputError`` with the one line the command line prints; Ctrl-C (or SIGTERM)
during a run raises ``RunInterrupted`` after the finished tasks are stored and reported.
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowmeter import defaults

if TYPE_CHECKING:  # imported when used: observe_traces needs none of the report stack
    from knowmeter.activation import ActivationReport
    from knowmeter.config import RunConfig
    from knowmeter.dryrun import DryRun
    from knowmeter.evaluation import Prepared
    from knowmeter.observe import HealthReport
    from knowmeter.probe import ProbeResult
    from knowmeter.report import Report
    from knowmeter.runner import Backend, Budget, ExecutionStats, PostProcess, StoredSpend, Task
    from knowmeter.store import BudgetStatus, RunDir, RunRecord, TaskRecord

__all__ = [
    "Listener",
    "RunInterrupted",
    "comprehend",
    "dry_run",
    "evaluate",
    "generate_probe_set",
    "merge",
    "observe_traces",
    "rescore",
    "resume",
]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM: ``signum``) during a run, after the finished tasks were stored and the
    run was finished as ``interrupted``: ``report`` is its report (decision INCOMPLETE);
    ``run_id`` resumes it. A ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops."""

    def __init__(self, run_id: str, report: Report, signum: int = signal.SIGINT) -> None:
        super().__init__(f"run {run_id} interrupted: {report.run.tasks_done}/{report.run.tasks_total} tasks are stored")
        self.run_id = run_id
        self.report = report
        self.signum = signum


class Listener:
    """What a caller hears while a run goes. Every method does nothing here; the command line
    subclasses it to print the plan, the notes and the progress."""

    def started(self, prepared: Prepared, run_dir: RunDir, tasks: int, *, resumed: bool) -> None:
        """The run is stored and about to execute ``tasks`` tasks (fewer than planned on a resume)."""

    def note(self, line: str) -> None:
        """One line the user should read: before the tasks run (the demo agent is no model, a
        script agent's workspace leaks, tasks are unsealed), after (tasks the budget stopped)."""

    def executing(self, budget: Budget) -> None:
        """The tasks start now, every model call charged to ``budget`` (live: e.g. its
        ``one_at_a_time_now`` says whether calls are kept one at a time to learn a cost)."""

    def record(self, record: TaskRecord) -> None:
        """One task finished (its stored record)."""

    def executed(self) -> None:
        """The tasks stopped running (all done, budget stopped or interrupted); the report follows."""


def _resolved(config: RunConfig | str | Path | None, overrides: dict[str, Any]) -> RunConfig:
    """The run configuration of ``evaluate(config, **overrides)`` (see there)."""
    from knowmeter.config import RunConfig
    from knowmeter.evaluation import resolve_config
    from knowmeter.settings import Overrides

    if "config" in overrides:
        raise TypeError("pass the eval.yaml as the first argument, not config=")
    if isinstance(config, RunConfig):
        if overrides:
            raise TypeError("overrides apply to an eval.yaml; change the RunConfig itself instead")
        return config
    lists = {f.name for f in fields(Overrides) if str(f.type).startswith("list[")}
    for name, value in overrides.items():
        if isinstance(value, str) and name in lists:  # a str is a list of one-letter file names
            raise TypeError(f"{name}= takes a list of them, e.g. {name}=[{value!r}]")
    path = Path.cwd() if config is None else Path(config)
    if path.is_dir():
        return resolve_config(Overrides(**overrides), path)
    return resolve_config(Overrides(**overrides, config=path), path.parent)


def evaluate(
    config: RunConfig | str | Path | None = None,
    /,
    *,
    listener: Listener | None = None,
    backend: str = defaults.BACKEND,
    ray_address: str | None = None,
    **overrides: Any,
) -> Report:
    """Run every sample under every variant, grade, compare, decide and store the run.

    ``config`` is an ``eval.yaml`` path, a project folder (its ``eval.yaml`` if any), a resolved
    ``RunConfig`` or None (the current folder). ``overrides`` are the ``eval`` flags by their
    ``knowmeter.evaluation.Overrides`` names (``control="baseline"``, ``treatments=[...]``,
    ``executor=...``, ``repeat=2``, ``budget_usd=0.5``, …) and win over the file. Returns the
    report; its ``decision`` holds the outcome and exit code. ``backend`` is where the agent runs
    (``local``, or ``ray`` at ``ray_address``). Raises ``InputError`` for bad input and
    ``RunInterrupted`` on Ctrl-C or SIGTERM."""
    from knowmeter.evaluation import prepare
    from knowmeter.reuse import start_reusing

    resolved = _resolved(config, overrides)

    def plan() -> _Plan:
        prepared = prepare(resolved)
        placed = _backend(backend, ray_address)  # before the run is stored: an unreachable cluster leaves no empty run
        run_dir, tasks = start_reusing(prepared)  # without the control's tasks when --control-run stands in
        return _Plan(prepared, run_dir, tasks, backend=placed, notes=_start_notes(prepared))

    return _run(plan, listener or Listener(), resumed=False)


def dry_run(config: RunConfig | str | Path | None = None, /, **overrides: Any) -> DryRun:
    """What ``evaluate(config, **overrides)`` would do — its plan, an estimated cost and wall time
    with a range, and what it could detect — without running, spending or storing anything
    (``knowmeter.dryrun`` says where each figure comes from)."""
    from knowmeter.dryrun import plan_dry_run
    from knowmeter.evaluation import prepare
    from knowmeter.runner import CACHE_FILE, ResponseCache, directory_fingerprint, task_cache_key

    resolved = _resolved(config, overrides)
    prepared = prepare(resolved)
    cached: int | None = None
    if not resolved.no_cache:
        cached = 0
        if (resolved.output_path() / CACHE_FILE).is_file():
            cache = ResponseCache(resolved.output_path())
            fingerprint = functools.cache(directory_fingerprint)  # each workspace hashed once
            try:
                identity = prepared.executor.identity()
                cached = sum(
                    cache.has(task_cache_key(t, identity, resolved.model, fingerprint)) for t in prepared.tasks
                )
            finally:
                cache.close()
    return plan_dry_run(prepared, cached)


def resume(
    run: str | Path,
    *,
    output_dir: str | Path | None = None,
    listener: Listener | None = None,
    backend: str = defaults.BACKEND,
    ray_address: str | None = None,
    budget_usd: float | None = None,
    max_errors: int | None = None,
) -> Report:
    """Continue a killed, interrupted or halted run (an id, a unique prefix, ``latest`` or a run folder in
    ``output_dir``, default ``knowmeter.defaults.OUTPUT_DIR``): execute only its missing tasks, then decide as
    ``evaluate`` (or ``comprehend``, for a comprehension run) does. Refuses a run whose samples or
    artifacts changed since it started. The run keeps one budget: what its earlier legs spent
    counts against its total, which ``budget_usd`` replaces (to finish a run the budget stopped);
    ``max_errors`` replaces the run's (see ``evaluate``)."""
    from knowmeter.evaluation import resume_run

    run_dir = _find(run, output_dir)
    run_dir.lock()  # two resumes of one run would run its missing tasks twice
    try:
        comprehension = run_dir.read_run().comprehension is not None

        def plan() -> _Plan:
            if not comprehension:
                prepared, tasks = resume_run(run_dir)
                if max_errors is not None:
                    prepared.config = prepared.config.model_copy()
                    prepared.config.max_errors = max_errors
                return _Plan(
                    prepared,
                    run_dir,
                    tasks,
                    backend=_backend(backend, ray_address),
                    notes=_start_notes(prepared),
                    budget=_continued_budget(prepared, run_dir, budget_usd),
                )
            from knowmeter.comprehension import GRADER_KIND, ComprehensionPlan, make_grader, reprepare

            plans: list[ComprehensionPlan] = []

            def again(record: RunRecord) -> Prepared:
                plans.append(reprepare(record))
                return plans[-1].prepared

            prepared, tasks = resume_run(run_dir, again)
            return _Plan(
                prepared,
                run_dir,
                tasks,
                post_process=lambda budget: make_grader(plans[0], budget),
                budget=_continued_budget(prepared, run_dir, budget_usd, GRADER_KIND),
            )

        return _run(plan, listener or Listener(), resumed=True)
    finally:
        run_dir.unlock()


def comprehend(
    skill: str | Path,
    *,
    judges: Sequence[str],
    evals: str | Path | None = None,
    executor: str = defaults.EXECUTOR,
    model: str | None = None,
    executor_options: Mapping[str, Any] | None = None,
    repeat: int = defaults.REPEAT,
    judge_repeat: int = defaults.JUDGE_REPEAT,
    ngram: int = defaults.VERBATIM_NGRAM,
    cwd: str | Path | None = None,
    base_dir: str | Path | None = None,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    retry: int | None = None,
    no_cache: bool | None = None,
    budget_usd: float | None = None,
    seed: int | None = None,
    output_dir: str | Path | None = None,
    listener: Listener | None = None,
    flags: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> Report:
    """Did the agent understand ``skill`` (a SKILL.md or its folder)? Every case of its eval file
    runs without the skill and with it; each answer is graded per expected behavior by
    ``judges`` (``executor:model``; ``scripted-grader`` is the offline stand-in); the agent is
    ``executor`` with ``model`` and ``executor_options`` (eval.yaml's ``executor.options``). Paths are
    relative to ``base_dir`` (default: the current folder). ``flags``: caveats the run carries
    from before it started (``comprehend --calibrate``: the anchors the grader missed), ``notes``
    lines it records (how the calibration went). The
    report's ``comprehension`` section holds the skill's verdict, its ``decision`` the outcome and
    exit code."""
    from knowmeter.comprehension import (
        GRADER_KIND,
        Target,
        make_config,
        make_grader,
        prepare_comprehension,
        start_comprehension,
    )
    from knowmeter.evaluation import run_budget

    target = Target(
        str(skill),
        None if evals is None else str(evals),
        ngram,
        None if cwd is None else str(cwd),
        tuple(flags),
        tuple(notes),
    )
    config = make_config(
        base_dir=Path(base_dir) if base_dir is not None else Path.cwd(),
        target=target,
        executor=executor,
        model=model,
        executor_options=dict(executor_options or {}),
        judges=list(judges),
        repeat=repeat,
        judge_repeat=judge_repeat,
        concurrency=concurrency,
        timeout_s=timeout_s,
        retry=retry,
        no_cache=no_cache,
        budget_total_usd=budget_usd,
        seed=seed,
        output_dir=None if output_dir is None else str(output_dir),
    )

    def plan() -> _Plan:
        made = prepare_comprehension(config, target)
        return _Plan(
            made.prepared,
            start_comprehension(made),
            made.prepared.tasks,
            post_process=lambda budget: make_grader(made, budget),
            budget=run_budget(made.prepared, GRADER_KIND),
        )

    return _run(plan, listener or Listener(), resumed=False)


def measure_activation(
    skill: str | Path,
    *,
    cases: Sequence[str | Path] = (),
    against: str | Path | None = None,
    description: str | None = None,
    distractors: Sequence[str] = (),
    skills_dirs: Sequence[str | Path] = (),
    counts: str = "either",
    split: bool = False,
    executor: str = defaults.EXECUTOR,
    executor_options: Mapping[str, Any] | None = None,
    base_dir: str | Path | None = None,
    **settings: Any,
) -> ActivationReport:
    """Does the agent load ``skill`` when it should, and only then? Every case of ``cases`` (case
    files; none: the skill's own examples / anti_examples) runs with only its skills installed;
    with ``against`` (another version) or ``description`` (a new frontmatter description) both
    versions run, paired, and the report carries the verdict. ``settings`` are run settings by
    name (``repeat``, ``model``, ``concurrency``, ``timeout_s``, ``retry``, ``no_cache``,
    ``budget_total_usd``, ``seed``, ``output_dir``). Paths are relative to ``base_dir`` (default:
    the current folder). Ctrl-C raises ``knowmeter.activation.ActivationInterrupted``."""
    from knowmeter.activation import Target, run_activation

    target = Target(
        skill=str(skill),
        case_files=tuple(str(c) for c in cases),
        against=None if against is None else str(against),
        description=description,
        skills_dirs=tuple(str(d) for d in skills_dirs),
        distractors=tuple(distractors),
        counts=counts,  # type: ignore[arg-type]
        split=split,
    )
    settings.setdefault("repeat", 3)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    _, report = run_activation(
        target, base_dir=base, executor=executor, executor_options=dict(executor_options or {}), **settings
    )
    return report


def rescore(
    run: str | Path,
    *,
    output_dir: str | Path | None = None,
    threshold: float | None = None,
    seed: int | None = None,
    bootstrap_samples: int | None = None,
    max_mde: float | None = None,
    min_pairs: int | None = None,
    stability_limit: float | None = None,
) -> Report:
    """Recompute a stored run's comparison, verdict and decision from its stored results, with
    the given statistical settings in place of the run's, without re-running anything; stores
    the new report.json. ``run`` as for ``resume``."""
    from knowmeter._blas import one_blas_thread

    with one_blas_thread():
        from knowmeter.pipeline import rebuild_report
        from knowmeter.report import ReportOverrides

    overrides = ReportOverrides(
        threshold=threshold,
        seed=seed,
        bootstrap_samples=bootstrap_samples,
        max_mde=max_mde,
        min_pairs=min_pairs,
        stability_limit=stability_limit,
    )
    return rebuild_report(_find(run, output_dir), overrides)


def merge(
    runs: Sequence[str | Path],
    *,
    output_dir: str | Path | None = None,
    into: str | Path | None = None,
    listener: Listener | None = None,
) -> Report:
    """One run of the whole plan, with its report, from the runs of every shard of it
    (``evaluate(shard="I/N")``), stored in ``into`` (a store; default ``output_dir``). ``runs``
    as ``resume``'s ``run``. Raises ``InputError`` for a run that is no shard, shards of
    different plans, a shard missing or given twice, a task in two shards; nothing is written
    then. Result lines a shard could not read are skipped and told to ``listener.note``."""
    from knowmeter._blas import one_blas_thread
    from knowmeter.store import merge_shards

    with one_blas_thread():
        from knowmeter.pipeline import finalize

    store = Path(into if into is not None else output_dir if output_dir is not None else defaults.OUTPUT_DIR)
    merged, notes = merge_shards([_find(run, output_dir) for run in runs], store / "runs")
    for line in notes:
        (listener or Listener()).note(line)
    return finalize(merged, status=str(merged.read_run().status))


def observe_traces(
    paths: Sequence[str | Path],
    *,
    last: str | None = None,
    since: str | None = None,
    until: str | None = None,
    skills: Iterable[str] | None = None,
    kb: str | Path | None = None,
    workers: int | None = None,
    backend: str = defaults.BACKEND,
    ray_address: str | None = None,
    count_retried_commands: bool = False,
) -> HealthReport:
    """Skill health from Claude Code / Codex usage traces under ``paths``: per skill its segments,
    failure and gap rates, coverage of ``kb`` and a health band. ``last`` (``7d``), ``since`` and
    ``until`` limit the segments by start time; ``skills`` keeps only those skills; ``workers``
    processes (or ``backend="ray"`` tasks at ``ray_address``) share the files;
    ``count_retried_commands`` puts retried commands among the gap signals."""
    from knowmeter.observe import make_window, observe

    window = make_window(last=last, since=since, until=until)
    return observe(
        list(paths),
        window=window,
        skills=skills,
        kb=kb,
        workers=workers,
        backend=backend,
        ray_address=ray_address,
        count_retried_commands=count_retried_commands,
    )


def generate_probe_set(
    kb: Sequence[str | Path] = (),
    *,
    generator: str = defaults.PROBE_GENERATOR,
    count: int | None = None,
    samples: Sequence[str | Path] = (),
    include_text: bool = False,
    budget_usd: float | None = None,
    config: str | Path | None = None,
) -> ProbeResult:
    """A probe sample set: competency questions from the structure of the knowledge base in
    folders ``kb``, each with its provenance, de-duplicated against each other and the sample
    files ``samples``. ``generator`` is ``headings`` (non-LLM) or ``executor:model``, whose calls
    are charged to ``budget_usd``. What is not given comes from ``config`` (an eval.yaml; default
    ./eval.yaml if present): its ``knowledgeDirs``, ``samples`` and ``budget.totalUSD``. Nothing is
    written (``knowmeter.probe.write_probe_set`` writes the file). Raises ``InputError`` without a
    knowledge base and ``GeneratorReplyError`` when the model's reply stays unusable."""
    import anyio

    from knowmeter.config import EvalFile, find_config, load_eval_file
    from knowmeter.errors import InputError
    from knowmeter.probe import headings_probe, model_probe
    from knowmeter.samples import load_samples

    path = Path(config) if config is not None else find_config(Path.cwd())
    ef = load_eval_file(path) if path is not None else EvalFile()
    base = path.parent if path is not None else Path.cwd()
    kb_dirs = [Path(d) for d in kb] or [base / d for d in ef.knowledgeDirs or []]
    if not kb_dirs:
        raise InputError("no knowledge base: pass --kb DIR (or run in a folder whose eval.yaml has knowledgeDirs)")
    if samples:
        sample_files = [Path(s) for s in samples]
    else:
        sample_files = [base / s for s in ef.sample_files if (base / s).is_file()]
    existing = load_samples(sample_files).samples if sample_files else ()
    count = defaults.PROBE_COUNT if count is None else count
    if generator == "headings":
        return headings_probe(kb_dirs, count=count, existing=existing)
    limit = ef.budget.totalUSD if budget_usd is None and ef.budget is not None else budget_usd
    return anyio.run(
        lambda: model_probe(
            kb_dirs, generator, count=count, existing=existing, include_text=include_text, budget_usd=limit
        )
    )


def _start_notes(prepared: Prepared) -> list[str]:
    """What the user should know before an evaluation's tasks run: the offline demo agent and the
    echo harness check are not models; a script agent's workspace exposes the answer key or another arm's artifact; an
    agent CLI's tasks are not sealed from each other."""
    notes = []
    if prepared.executor.name == "offline":
        notes.append(
            "executor offline: the built-in non-LLM demo agent (no model is called); choose an agent with "
            "--executor or executor: in eval.yaml"
        )
    if prepared.executor.name == "echo":
        notes.append(
            "executor echo: a harness check (each answer is its prompt, no model is called); the timings are "
            "knowmeter's own and the verdict says nothing about the knowledge"
        )
    if prepared.workspace_leak and prepared.executor.name != "echo":  # echo reads no file
        who = (
            "the offline agent searches and reads its workspace, so its answers depend on them (on how many "
            "runs the store holds, too)"
            if prepared.executor.name == "offline"
            else "a script agent that reads files can see it"
        )
        notes.append(
            f"⚠ {prepared.workspace_leak}: {who} (agent CLIs are refused this workspace); give the variants a "
            "cwd that holds only the knowledge base"
        )
    if prepared.executor.sealed is False:
        notes.append(
            f"UNSEALED: {prepared.executor.name} tasks are not sealed from each other; an agent can read the "
            "other arm's artifact, the samples and the run store, and files it writes outside its folder "
            "stay (--unsealed)"
        )
    return notes


def _continued_budget(
    prepared: Prepared, run_dir: RunDir, total_usd: float | None, judge_kind: str = "judge"
) -> Budget:
    """A resumed run's budget: its total (``total_usd`` when given, else its last leg's) less what
    its earlier legs spent — their record in run.json, plus what the stored results and the budget's
    ledger hold beyond it (a leg killed by ``kill -9`` recorded nothing; its calls in flight are
    charged at their reservation). ``judge_kind`` as for ``run_budget``."""
    from knowmeter.evaluation import run_budget

    budget = run_budget(prepared, judge_kind)
    earlier = run_dir.read_run().budget
    if total_usd is not None:
        budget.total_usd = total_usd
    elif earlier is not None:
        budget.total_usd = earlier.total_usd
    if earlier is not None:
        budget.continue_from(earlier)
    budget.continue_after_kill(_stored_spend(run_dir, judge_kind), run_dir.path)
    return budget


def _stored_spend(run_dir: RunDir, judge_kind: str) -> dict[str, StoredSpend]:
    """What the run's stored results say was spent: agent calls (one per task; an answer from the
    cache cost nothing) and the judges' calls (one total per task: ``grade.judge_cost_usd``, or a
    comprehension run's ``comprehension.cost_usd``), known and unknown."""
    from knowmeter.runner import StoredSpend
    from knowmeter.store import task_records

    tallies: dict[str, list[Any]] = {"agent": [0, 0, 0.0], judge_kind: [0, 0, 0.0]}
    for record in task_records(run_dir.results_file):
        costs = {"agent": 0.0 if record.cached else record.exec.cost_usd, judge_kind: _judge_cost(record)}
        for kind, cost in costs.items():
            if kind != "agent" and cost == 0.0:
                continue  # no judge call (none configured, or not asked): nothing spent
            tally = tallies[kind]
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                tally[0] += 1
                tally[2] += cost
            else:
                tally[1] += 1
    return {kind: StoredSpend(*tally) for kind, tally in tallies.items() if tally[0] or tally[1]}


def _judge_cost(record: TaskRecord) -> float | None:
    """What the judges of ``record`` cost: its grade's ``judge_cost_usd``, or a comprehension
    run's ``comprehension.cost_usd`` (0.0: none was asked; None: unknown)."""
    if record.grade is not None:
        return record.grade.judge_cost_usd
    if record.comprehension is not None:
        return record.comprehension.cost_usd
    return 0.0


def halt_note(run_id: str, reason: str, not_started: int, comprehension: bool = False) -> str:
    """What the user reads when a run stopped because its first tasks failed the same way."""
    from knowmeter.store import resume_command

    return (
        f"stopped: {reason}; {not_started} task(s) not started (nothing spent on them). Fix the cause, "
        f"then finish the run with {resume_command(run_id, comprehension=comprehension)} (--max-errors 0 never stops)"
    )


def _record_halt(run_dir: RunDir, reason: str | None, not_started: int) -> None:
    """Store in run.json why this leg stopped early (or that it did not: a resumed leg that ran
    to the end clears an earlier leg's reason)."""
    from knowmeter.store import RunHalted

    record = run_dir.read_run()
    if reason is None and record.halted is None:
        return
    if reason is None:
        record.unset("halted")
    else:
        record.halted = RunHalted(reason=reason, tasks_not_started=not_started)
    run_dir.write_run(record)


def _find(run: str | Path, output_dir: str | Path | None) -> RunDir:
    from knowmeter.store import find_run

    return find_run(Path(output_dir if output_dir is not None else defaults.OUTPUT_DIR), str(run))


def _backend(name: str, address: str | None) -> Backend:
    from knowmeter.runner import open_backend

    return open_backend(name, address)


@dataclass
class _Plan:
    """A stored run ready to execute: its plan, the tasks left to run, how each finished task is
    graded (None: as ``evaluate`` grades), where the agent runs, the notes for the user and the
    budget (None: a new one of the run's total)."""

    prepared: Prepared
    run_dir: RunDir
    tasks: list[Task]
    post_process: Callable[[Budget], PostProcess] | None = None
    backend: Backend | None = None
    notes: Sequence[str] = ()
    budget: Budget | None = None


@dataclass(frozen=True)
class _Executed:
    """How a run's execution ended: ``complete``, ``incomplete`` (the budget stopped tasks),
    ``halted`` (its first tasks all failed the same way) or ``interrupted`` (Ctrl-C or SIGTERM: ``signum``)."""

    run_dir: RunDir
    status: str
    wall_s: float | None
    budget: BudgetStatus
    signum: int | None = None


def _run(plan: Callable[[], _Plan], listener: Listener, *, resumed: bool) -> Report:
    """Make the run with ``plan``, execute its tasks, then finish it: report.json, decision,
    index. The plan (samples, tasks, assertions) is released before the report is built from the
    stored results, so the two never take memory at once. Ctrl-C or SIGTERM finishes the run as
    interrupted and raises ``RunInterrupted``. The run is locked meanwhile."""
    executed = _execute(plan, listener, resumed=resumed)
    from knowmeter._blas import one_blas_thread

    with one_blas_thread():  # the report stack (numpy): imported once the tasks ran
        from knowmeter.pipeline import finalize

    try:
        report = finalize(executed.run_dir, status=executed.status, wall_s=executed.wall_s, budget=executed.budget)
    finally:
        executed.run_dir.unlock()
    if executed.signum is not None:
        raise RunInterrupted(executed.run_dir.id, report, executed.signum)
    return report


def _execute(plan: Callable[[], _Plan], listener: Listener, *, resumed: bool) -> _Executed:
    """Make the plan, lock its run and execute its tasks; the run stays locked for ``_run`` to
    finish (it is unlocked when anything here fails)."""
    import anyio

    from knowmeter.evaluation import execute, run_budget
    from knowmeter.postprocess import make_post_process
    from knowmeter.runner import RunStopped, until_interrupted

    made = plan()
    made.run_dir.lock()  # a no-op when resume already holds it
    try:
        listener.started(made.prepared, made.run_dir, len(made.tasks), resumed=resumed)
        for note in made.notes:
            listener.note(note)
        budget = made.budget if made.budget is not None else run_budget(made.prepared)
        process = (
            made.post_process(budget) if made.post_process is not None else make_post_process(made.prepared, budget)
        )
        listener.executing(budget)

        def batch(tasks: list[Task]) -> Awaitable[tuple[ExecutionStats, Budget]]:
            return execute(
                made.prepared,
                made.run_dir,
                tasks,
                post_process=process,
                on_record=listener.record,
                budget=budget,
                backend=made.backend,
            )

        looks = made.prepared.config.sequential
        if looks:  # the statistics (numpy) only when the run looks as it goes
            from knowmeter.sequential import run_looks
        try:
            stats, budget = anyio.run(
                lambda: until_interrupted(
                    lambda: (
                        run_looks(made.prepared, made.run_dir, batch, made.tasks, listener.note)
                        if looks
                        else batch(made.tasks)
                    )
                )
            )
        except KeyboardInterrupt as stop:  # RunStopped names its signal; any other is a Ctrl-C
            listener.executed()
            signum = stop.signum if isinstance(stop, RunStopped) else signal.SIGINT
            return _Executed(made.run_dir, "interrupted", None, budget.record(), signum)
        listener.executed()
        if stats.not_started:
            listener.note(f"budget: {len(stats.not_started)} task(s) not started — the budget would have been exceeded")
        _record_halt(made.run_dir, stats.halted, len(stats.halted_tasks))
        if stats.halted is not None:
            comprehension = made.run_dir.read_run().comprehension is not None
            listener.note(halt_note(made.run_dir.id, stats.halted, len(stats.halted_tasks), comprehension))
            return _Executed(made.run_dir, "halted", stats.wall_s, budget.record())
        status = "complete" if not stats.not_started else "incomplete"
        return _Executed(made.run_dir, status, stats.wall_s, budget.record())
    except BaseException:
        made.run_dir.unlock()
        raise
