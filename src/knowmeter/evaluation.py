"""The run's plan: resolve the configuration, load and check the samples, variants and
executor, plan the tasks, store run.json, execute (or resume) the tasks.

``knowmeter.api`` sequences these stages with ``knowmeter.pipeline``'s (it is the only caller
that orchestrates: ``resolve_config`` → ``prepare`` → ``start_run`` / ``resume_run`` →
``execute`` → ``pipeline.finalize``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from knowmeter import _provenance, defaults
from knowmeter.artifacts import Variant, copies_in, resolve_variant
from knowmeter.config import (
    EvalFile,
    RunConfig,
    VariantSpec,
    find_config,
    first_error,
    load_eval_file,
    redact_secrets,
    restore_secrets,
)
from knowmeter.errors import InputError
from knowmeter.executors import (
    Executor,
    ExecutorSpec,
    ExecutorUnavailable,
    UnknownExecutor,
    command_given_in,
    create_executor,
)
from knowmeter.grading import Assertion, JudgeSpec, judge_prompt_hash, load_assertions, metric_prompt_hashes
from knowmeter.judges import build_judges
from knowmeter.runner import (
    Backend,
    Budget,
    ExecutionSettings,
    ExecutionStats,
    Ledger,
    OnRecord,
    PostProcess,
    ResponseCache,
    Shard,
    Task,
    directory_fingerprint,
    execute_tasks,
    plan_tasks,
    shard_tasks,
    workspace_problem,
)
from knowmeter.samples import (
    SampleSet,
    find_sample_file,
    id_name_problem,
    load_samples,
    sample_set_hash,
    sample_set_info,
)
from knowmeter.settings import Overrides as Overrides  # the flags' values resolve_config reads
from knowmeter.store import (
    RUN_SCHEMA_VERSION,
    Git,
    JudgeInfo,
    ResultsWriter,
    RunDir,
    RunExecutor,
    RunRecord,
    RunVariant,
    SampleSetInfo,
    ShardInfo,
    SubsetInfo,
    finished_task_ids,
    plan_hash,
    utc_timestamp,
)
from knowmeter.watermark import Watermark


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def parse_option_flags(flags: list[str] | None) -> dict[str, Any]:
    """``-O KEY=VALUE`` flags as options; a value is read as YAML (``true``, ``3``, ``[a, b]``)."""
    options: dict[str, Any] = {}
    if not flags:
        return options
    import yaml  # only for flags: a run without them need not load the YAML parser

    for flag in flags:
        key, eq, value = flag.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--executor-option {flag!r}: expected KEY=VALUE, e.g. base_url=http://127.0.0.1:8080")
        try:
            options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            options[key.strip()] = value
    return options


def _flag_variant(expression: str, role: Literal["control", "treatment"], ef: EvalFile) -> VariantSpec:
    """A variant named on the command line: eval.yaml's variant of that name (its artifact and
    ``cwd``), else the expression itself, with the ``cwd`` of the eval.yaml variant with this
    artifact, else the one ``cwd`` all its variants share."""
    listed = ef.variants or []
    for vf in listed:
        if expression == vf.name:
            return VariantSpec(name=vf.name, role=role, expression=vf.artifact, cwd=vf.cwd)
    cwd = next((vf.cwd for vf in listed if expression == vf.artifact), None)
    cwds = {vf.cwd for vf in listed}
    if cwd is None and len(cwds) == 1:
        cwd = cwds.pop()
    return VariantSpec(role=role, expression=expression, cwd=cwd)


def resolve_config(ov: Overrides, cwd: Path) -> RunConfig:
    """Merge flags over ``eval.yaml`` over defaults."""
    config_path = ov.config if ov.config is not None else find_config(cwd)
    if ov.config is not None and not ov.config.is_file():
        raise InputError(f"{ov.config}: config file not found")
    ef = load_eval_file(config_path) if config_path is not None else EvalFile()
    base = (config_path.parent if config_path is not None else cwd).resolve()

    samples = ov.samples or ef.sample_files
    if not samples:
        found = find_sample_file(base)
        if found is None:
            raise InputError(f"no sample file: pass --samples FILE or put eval-samples.yaml in {base}")
        samples = [found.name]

    variants: list[VariantSpec]
    if ov.control is not None or ov.treatments:
        variants = []
        if ov.control is not None:
            variants.append(_flag_variant(ov.control, "control", ef))
        variants += [_flag_variant(t, "treatment", ef) for t in ov.treatments or []]
    elif ef.variants:
        variants = []
        for i, vf in enumerate(ef.variants):
            role = vf.role or ("control" if i == 0 else "treatment")
            variants.append(VariantSpec(name=vf.name, role=role, expression=vf.artifact, cwd=vf.cwd))
    else:
        raise InputError("no variants: pass --control X --treatment Y, or list variants in eval.yaml")
    if sum(v.role == "control" for v in variants) > 1:
        raise InputError("more than one control variant; mark exactly one variant role: control")

    exec_name, exec_model, exec_opts = None, None, {}
    if isinstance(ef.executor, str):
        exec_name = ef.executor
    elif ef.executor is not None:
        exec_name, exec_model, exec_opts = ef.executor.name, ef.executor.model, dict(ef.executor.options)
    budget = ef.budget
    gates = ef.gates
    judges = ov.judges or ([ef.judge] if isinstance(ef.judge, str) else ef.judge) or []
    timeout_s = _first(ov.timeout_s, ef.timeoutMs / 1000 if ef.timeoutMs else None, defaults.TIMEOUT_S)
    per_ms = budget.perSampleMs if budget else None
    if per_ms is not None:
        timeout_s = min(timeout_s, per_ms / 1000)
    hc = ef.hedgingClassifier
    design = _first(ov.sequential_design, ef.sequentialDesign, defaults.SEQUENTIAL_DESIGN)
    futility = bool(_first(ov.futility, ef.futility, defaults.FUTILITY))
    # choosing a design or the futility stop asks for a sequential run
    chosen = ov.sequential_design or ef.sequentialDesign or ov.futility or ef.futility
    sequential = bool(_first(ov.sequential, ef.sequential, True if chosen else None, False))
    if sequential and (ov.shard is not None or len(variants) < 2):
        raise InputError(
            "--sequential needs a control and a treatment and the whole plan (no --shard): its looks "
            "compare the arms over all the samples run so far"
        )
    control_run = _first(ov.control_run, ef.controlRun)
    if control_run is not None and ov.shard is not None:
        raise InputError("--control-run cannot be combined with --shard yet: run the treatment whole")
    flag = ov.executor
    if flag and Path.cwd().resolve() != base:  # a flag's relative paths name files in the shell's folder
        flag = command_given_in(flag, Path.cwd())
    try:
        return RunConfig(
            base_dir=str(base),
            samples=list(samples),
            variants=variants,
            executor=_first(flag, exec_name, defaults.EXECUTOR),
            executor_options={**(exec_opts if ov.executor is None else {}), **parse_option_flags(ov.executor_options)},
            model=_first(ov.model, ef.model, exec_model),
            concurrency=_first(ov.concurrency, ef.concurrency, defaults.CONCURRENCY),
            timeout_s=timeout_s,
            retry=_first(ov.retry, ef.retry, defaults.RETRY),
            repeat=_first(ov.repeat, ef.repeat, defaults.REPEAT),
            no_cache=bool(_first(ov.no_cache, ef.noCache, False)),
            seed=_first(ov.seed, ef.seed, defaults.SEED),
            skill_dir=_first(ov.skill_dir, ef.skillDir, defaults.SKILL_DIR),
            output_dir=_first(ov.output_dir, ef.outputDir, defaults.OUTPUT_DIR),
            budget_total_usd=_first(ov.budget_usd, budget.totalUSD if budget else None),
            budget_per_task_usd=budget.perSampleUSD if budget else None,
            budget_per_task_ms=per_ms,
            judges=list(judges),
            judge_repeat=_first(ov.judge_repeat, ef.judgeRepeat, defaults.JUDGE_REPEAT),
            length_debias=bool(_first(ov.length_debias, ef.lengthDebias, defaults.LENGTH_DEBIAS)),
            max_graded_output_chars=_first(ef.maxGradedOutputChars, defaults.MAX_GRADED_OUTPUT_CHARS),
            knowledge_dirs=list(ef.knowledgeDirs or []),
            max_gap_rate=_first(ov.max_gap_rate, gates.maxGapRate if gates else None),
            gap_rate_regression=_first(ov.gap_rate_regression, gates.gapRateRegression if gates else None),
            layer_gate=_first(ov.threshold, gates.layerGate if gates else None, defaults.LAYER_GATE),
            min_effect=_first(gates.minEffect if gates else None, defaults.MIN_EFFECT),
            max_mde=_first(ov.max_mde, gates.maxMde if gates else None, defaults.MAX_MDE),
            min_pairs=_first(ov.min_pairs, gates.minPairs if gates else None, defaults.MIN_PAIRS),
            stability_limit=_first(
                ov.stability_limit, gates.stabilityLimit if gates else None, defaults.STABILITY_LIMIT
            ),
            bootstrap_samples=_first(ov.bootstrap_samples, ef.bootstrapSamples, defaults.BOOTSTRAP_SAMPLES),
            # the spec §4.3 classifier is the default whenever the run has a judge: the first
            # one, unless eval.yaml names another or turns it off (hedgingClassifier.enabled)
            hedging_judge=_first(
                ov.hedging_judge,
                hc.judge if hc and hc.enabled else None,
                judges[0] if judges and (hc is None or hc.enabled) else None,
            ),
            hedging_max_candidates=hc.maxCandidates if hc else defaults.HEDGING_MAX_CANDIDATES,
            unsealed=bool(ov.unsealed),
            shard=str(Shard.parse(ov.shard)) if ov.shard is not None else None,
            sequential=sequential,
            sequential_design=design,
            futility=futility,
            control_run=control_run,
            max_errors=_first(ov.max_errors, defaults.MAX_ERRORS),
            sample_ids=list(ov.sample_ids or []),
            limit=ov.limit,
        )
    except ValidationError as exc:
        raise InputError(f"invalid setting {first_error(exc)}; fix the flag or eval.yaml") from None


@dataclass
class Prepared:
    """Everything a run needs, loaded and validated."""

    config: RunConfig
    sample_set: SampleSet
    variants: list[Variant]
    executor: Executor
    tasks: list[Task]
    assertions: dict[str, list[Assertion]]
    judges: list[JudgeSpec]
    workspace_leak: str | None = None  # what a script agent's workspace exposes (see workspace_leak)
    shard: Shard | None = None  # the part of the plan ``tasks`` is (None: the whole plan)
    plan_tasks: int = 0  # tasks in the whole plan (= len(tasks) unless sharded)
    full_samples: int = 0  # samples in the sample files (more than ``sample_set``'s for a --limit / --sample run)


def executor_spec(config: RunConfig) -> ExecutorSpec:
    """How the run's executor is built (what a Ray worker builds it from)."""
    return ExecutorSpec(
        config.executor,
        config.model,
        dict(config.executor_options),
        unsealed=config.unsealed,
        base_dir=config.base_dir,
    )


def _executor_from(config: RunConfig) -> Executor:
    try:
        return create_executor(executor_spec(config))
    except (UnknownExecutor, ExecutorUnavailable) as exc:
        raise InputError(str(exc)) from None


def prepare(config: RunConfig) -> Prepared:
    """Load samples, resolve variants and the executor, plan the tasks."""
    base = config.base_path()
    full = load_samples([base / p for p in config.samples], display_paths=config.samples)
    sample_set = subset(full, config)
    cache_dir = config.output_path() / "artifacts"
    variants: list[Variant] = []
    for spec in config.variants:
        cwd = (base / spec.cwd).resolve() if spec.cwd else None
        if cwd is not None and not cwd.is_dir():
            raise InputError(f"variant {spec.expression!r}: cwd {spec.cwd!r} is not a directory")
        variants.append(
            resolve_variant(
                spec.expression,
                role=spec.role,
                skill_dir=Path(config.skill_dir),
                base_dir=base,
                cache_dir=cache_dir,
                name=spec.name,
                cwd=cwd,
            )
        )
    names = [v.name for v in variants]
    for name in names:
        problem = id_name_problem(name)
        if problem:
            raise InputError(f"variant name {name!r} {problem}; rename it in eval.yaml (name:)")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"two variants are both named {dupes[0]!r}; give them distinct names in eval.yaml")
    assertions = _assertions(sample_set, config)
    judges = build_judges(config.judges)
    executor = _executor_from(config)
    tasks = plan_tasks(sample_set.samples, variants, config.repeat, base)
    planned = len(tasks)
    shard = Shard.parse(config.shard) if config.shard is not None else None
    if shard is not None:
        tasks = shard_tasks(tasks, shard)
    for workspace in sorted({t.workspace for t in tasks}):
        problem = workspace_problem(workspace)
        if problem:
            raise InputError(f"workspace {workspace} (a sample's or variant's cwd) {problem}")
    leak = workspace_leak(tasks, config, variants)
    if leak and not executor.workspace_leak_allowed:  # an agent CLI, free to explore its workspace (or unknown)
        raise InputError(
            f"{leak}; give the variants a cwd that holds only the knowledge base "
            "(eval.yaml variants[].cwd or the sample's cwd)"
        )
    return Prepared(
        config, sample_set, variants, executor, tasks, assertions, judges, leak, shard, planned, len(full.samples)
    )


def _assertions(sample_set: SampleSet, config: RunConfig) -> dict[str, list[Assertion]]:
    """Each sample's assertions, validated. Samples that share their written assertions (as
    ``load_samples`` makes samples written alike do) share one validated list (assertions are
    frozen), so a plan of many samples holds each distinct set once."""
    source = ", ".join(config.samples)
    sample_dir = (config.base_path() / config.samples[0]).parent  # custom assertion paths are relative to it
    loaded: dict[int, list[Assertion]] = {}
    out: dict[str, list[Assertion]] = {}
    for s in sample_set.samples:
        key = id(s.assertions)  # the samples, alive meanwhile, keep each id unique
        if key not in loaded:
            loaded[key] = load_assertions(s.assertions, f"{source}: sample {s.sample_id!r}", sample_dir)
        out[s.sample_id] = loaded[key]
    return out


def subset(full: SampleSet, config: RunConfig) -> SampleSet:
    """The samples a ``--sample`` / ``--limit`` run runs (``full`` when neither is given): its
    watermark is the subset's own — its hash, its count, and file names marked ``[subset K of N]``
    — so a subset run is never compared or trended as a run of the whole set."""
    if not config.sample_ids and config.limit is None:
        return full
    kept = list(full.samples)
    if config.sample_ids:
        known = full.by_id()
        for sid in config.sample_ids:
            if sid not in known:
                near = difflib.get_close_matches(sid, list(known), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise InputError(f"--sample {sid!r}: no sample with this id in {', '.join(config.samples)}{hint}")
        wanted = set(config.sample_ids)
        kept = [s for s in kept if s.sample_id in wanted]
    if config.limit is not None:
        kept = kept[: config.limit]
    if len(kept) == len(full.samples):
        return full
    marked = tuple(f"{p} [subset {len(kept)} of {full.watermark.count}]" for p in full.watermark.paths)
    digest = sample_set_hash(kept).hexdigest()
    return SampleSet(tuple(kept), Watermark(marked, len(kept), digest), full.requires)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def workspace_leak(tasks: list[Task], config: RunConfig, variants: list[Variant]) -> str | None:
    """What agents' workspaces hold that they must not see — the sample file (the answer key),
    the run store, or the artifact of a variant other than the one under test — as one line
    naming every variant and everything it would see, or None. ``prepare`` refuses it for the
    agent CLIs (claude, codex, claude-sdk); the offline and script agents keep omk's default of
    working in the config's folder, so for them it is a warning printed before the run."""
    base = config.base_path()
    samples = [((base / s).resolve(), f"the sample file {s}") for s in config.samples]
    store = [(config.output_path().resolve(), f"the run store {config.output_dir}")]
    others = {
        v.name: [
            (p.resolve(), f"variant {o.name!r}'s artifact {p}")
            for o in variants
            if o.name != v.name
            for p in (o.artifact.root or o.artifact.path,)
            if p is not None
        ]
        for v in variants
    }
    seen: dict[Path, dict[str, list[str]]] = {}  # workspace → what it holds → the variants that see it
    # what a task sees depends only on its workspace and its variant: each pair is checked once
    for workspace, variant in dict.fromkeys((task.workspace, task.variant.name) for task in tasks):
        ws = workspace.resolve()
        for path, what in [*samples, *store, *others[variant]]:
            names = seen.setdefault(ws, {}).setdefault(what, [])
            if _inside(path, ws) and variant not in names:
                names.append(variant)
        # a hard link or a copy elsewhere in the workspace is copied into the sandbox all the same
        for what in copies_in(ws, {p: w for p, w in [*samples, *others[variant]] if p.is_file()}):
            names = seen[ws].setdefault(what, [])
            if variant not in names:
                names.append(variant)
    parts = []
    for ws, held in seen.items():
        names = list(dict.fromkeys(n for ns in held.values() for n in ns))
        if names:
            whats = " and ".join(w for w, ns in held.items() if ns)
            who = f"variant {names[0]!r}: its" if len(names) == 1 else f"variants {', '.join(map(repr, names))}: their"
            parts.append(f"{who} workspace {ws} contains {whats}")
    return "; ".join(parts) + ", which the agent must not see" if parts else None


def protected_paths(prepared: Prepared) -> tuple[Path, ...]:
    """What no agent may see: every variant's artifact as configured, the sample files, the run
    store and the project's folder (eval.yaml's, and its git repository's). The seal shows an
    agent none of them anyway; it blanks these where they lie inside a folder it does show (a
    project in /opt, a folder the user allowed). Each task gets only its own artifact, installed."""
    cfg = prepared.config
    base = cfg.base_path()
    artifacts = [v.artifact.root or v.artifact.path for v in prepared.variants]
    repository = _provenance.git_toplevel(base)
    paths = [
        *(p for p in artifacts if p is not None),
        *((base / s).resolve() for s in cfg.samples),
        cfg.output_path().resolve(),
        base.resolve(),
        *([repository] if repository is not None else []),
    ]
    return tuple(dict.fromkeys(paths))


def run_record(prepared: Prepared, run_id: str) -> RunRecord:
    """The content of ``run.json``: resolved config, provenance, watermark, variant hashes."""
    cfg = prepared.config
    record = RunRecord(
        schema_version=RUN_SCHEMA_VERSION,
        run_id=run_id,
        created_at=utc_timestamp(),
        status="running",
        versions=_provenance.versions(),
        git=Git.model_validate(_provenance.git_state(cfg.base_path())),
        config=RunConfig.model_validate(redact_secrets(cfg.model_dump(mode="json"))),
        seed=cfg.seed,
        watermark=prepared.sample_set.watermark,
        sample_set=SampleSetInfo.model_validate(sample_set_info(prepared.sample_set.samples)),
        executor=RunExecutor(
            name=prepared.executor.name,
            identity=prepared.executor.identity(),
            non_llm=prepared.executor.non_llm,
            model=cfg.model,
            sealed=prepared.executor.sealed,
        ),
        variants=[
            RunVariant(
                name=v.name,
                role=v.role,
                expression=v.expression,
                kind=v.artifact.kind,
                hash=v.artifact.hash,
                files=len(v.artifact.files),
                path=str(v.artifact.path) if v.artifact.path else None,
                cwd=str(v.cwd) if v.cwd else None,
                # the workspace's content, as the response cache fingerprints it: a knowledge base
                # there can change the answers
                cwd_hash=directory_fingerprint(v.cwd) if v.cwd else None,
            )
            for v in prepared.variants
        ],
        tasks_total=len(prepared.tasks),
        judges=[JudgeInfo(name=j.name, executor=j.executor.name, model=j.model) for j in prepared.judges],
        prompt_hashes={"judge": judge_prompt_hash(cfg.length_debias), **metric_prompt_hashes()},
    )
    if cfg.sample_ids or cfg.limit is not None:
        record.subset = SubsetInfo(
            samples=len(prepared.sample_set.samples),
            of=prepared.full_samples,
            sample_ids=list(cfg.sample_ids),
            limit=cfg.limit,
        )
    if prepared.shard is not None:
        record.shard = ShardInfo(
            index=prepared.shard.index,
            count=prepared.shard.count,
            plan_hash=plan_hash(record),
            plan_tasks=prepared.plan_tasks,
        )
    return record


#: A run store's own ``.gitignore``: git ignores the store — every run and every cached answer —
#: without an entry in the project's
STORE_GITIGNORE = "# written by knowmeter: the run store (runs, index, response cache) is not source\n*\n"


def start_run(prepared: Prepared) -> RunDir:
    store = prepared.config.output_path()
    run_dir = RunDir.create(store / "runs")
    ignore = store / ".gitignore"
    if not ignore.exists():
        ignore.write_text(STORE_GITIGNORE, encoding="utf-8")
    run_dir.write_run(run_record(prepared, run_dir.id))
    return run_dir


def relocated(config: RunConfig, store: Path | None) -> RunConfig:
    """``config`` with its project and store taken from where the run directory lies now (the
    folder may have moved, run.json may have been edited): never from the stored paths."""
    if store is None:
        return config
    store = store.resolve()
    out = Path(config.output_dir)
    moved = config.model_copy()
    if out.is_absolute() or ".." in out.parts or len(out.parts) >= len(store.parts):
        moved.base_dir, moved.output_dir = str(Path.cwd().resolve()), str(store)
    else:
        moved.base_dir = str(store.parents[len(out.parts) - 1])
    return moved


def resume_run(
    run_dir: RunDir,
    reprepare: Callable[[RunRecord], Prepared] | None = None,
) -> tuple[Prepared, list[Task]]:
    """Re-prepare a stored run from its ``run.json`` (with ``reprepare`` when given, else as
    ``eval`` does) and return the tasks not yet finished. Refuses when the samples or a
    variant's artifact changed since the run started."""
    record = run_dir.read_run()
    prepared = (
        reprepare(record)
        if reprepare
        else prepare(restore_secrets(relocated(record.config, run_dir.store), str(run_dir.run_file)))
    )
    if prepared.sample_set.watermark.sha256 != record.watermark.sha256:
        raise InputError(
            f"run {run_dir.id}: the sample set changed since the run started "
            f"({record.watermark.short} → {prepared.sample_set.watermark.short}); "
            "start a new run instead of resuming"
        )
    stored = {v.name: v.hash for v in record.variants}
    for v in prepared.variants:
        if stored.get(v.name) != v.artifact.hash:
            raise InputError(
                f"run {run_dir.id}: variant {v.name!r} changed since the run started; "
                "start a new run instead of resuming"
            )
    done = finished_task_ids(run_dir.results_file)
    return prepared, [t for t in prepared.tasks if t.id not in done]


def run_budget(prepared: Prepared, judge_kind: str = "judge") -> Budget:
    """The budget every model call of a run is charged to (agent, judges, hedging classifier); a
    non-LLM agent or judge costs nothing, so a budget of 0 does not refuse it. ``judge_kind`` is
    the kind the judges' calls are charged as (a comprehension run's graders: ``grader``): until
    one has a known cost, calls run one at a time."""
    config = prepared.config
    expected = frozenset({"agent", *([judge_kind] if config.judges else [])})
    free = {"agent"} if prepared.executor.non_llm else set()
    if prepared.judges and all(j.executor.non_llm for j in prepared.judges):
        free.add(judge_kind)
    return Budget(config.budget_total_usd, config.budget_per_task_usd, expected=expected, free=frozenset(free))


async def execute(
    prepared: Prepared,
    run_dir: RunDir,
    tasks: list[Task],
    *,
    post_process: PostProcess | None = None,
    on_record: OnRecord | None = None,
    budget: Budget | None = None,
    backend: Backend | None = None,
) -> tuple[ExecutionStats, Budget]:
    """Run ``tasks`` of a started run, appending to its ``results.jsonl``. ``budget`` (default:
    the run's own) is the one the post-processing's model calls are charged to as well;
    ``backend`` (default: local) is where the agent runs — this process stays the driver."""
    cfg = prepared.config
    budget = budget if budget is not None else run_budget(prepared)
    settings = ExecutionSettings(
        concurrency=cfg.concurrency,
        timeout_s=cfg.timeout_s,
        retry=cfg.retry,
        model=cfg.model,
        protected=protected_paths(prepared),
        max_errors=cfg.max_errors,
    )
    cache = None if cfg.no_cache else ResponseCache(cfg.output_path())
    if budget.total_usd is not None:  # calls charged before they start, for a leg that outlives a kill -9
        budget.ledger = Ledger(run_dir.path)
    try:
        with ResultsWriter(run_dir.results_file) as writer:
            executor = prepared.executor if backend is None else backend.place(prepared.executor, executor_spec(cfg))
            stats = await execute_tasks(
                tasks,
                executor,
                writer=writer,
                settings=settings,
                budget=budget,
                cache=cache,
                post_process=post_process,
                on_record=on_record,
            )
    finally:
        if cache is not None:
            cache.close()
        if budget.ledger is not None:
            budget.ledger.close()
    return stats, budget
