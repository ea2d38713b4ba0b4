"""A comprehension run on the ordinary runner: every case × repeat in two arms — ``baseline``
(no skill) and ``with-skill`` (the SKILL.md alone as the artifact) — through the same plan,
cache, budget, results file and ``--resume`` as ``knowmeter eval``; each finished answer is
graded at once and stored with its task.

The two arms' requests are built by the runner from the same sample and settings, so they differ
by the skill (system prompt and skill install) and nothing else. The with-skill artifact is the
SKILL.md file only: an ``audit-state.json`` or other files beside it are not shown to the agent.
Both arms work in the same folder: ``--cwd``, else an empty one under the output directory, so an
agent with file tools cannot read the skill (or its answer key) from disk in the baseline arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowmeter.artifacts import Artifact, Variant, hash_files, resolve_variant
from knowmeter.ask import CallSite
from knowmeter.comprehension._case import GraderCase
from knowmeter.comprehension._grade import grade_answer, unanswered
from knowmeter.comprehension._inputs import Inputs, load_inputs
from knowmeter.comprehension._prompt import GRADER_TEMPLATE
from knowmeter.config import RunConfig, VariantSpec, restore_secrets
from knowmeter.errors import InputError
from knowmeter.evaluation import Prepared, _executor_from, run_record
from knowmeter.executors import ExecResult
from knowmeter.grading import JudgeSpec
from knowmeter.judges import build_judges
from knowmeter.runner import Budget, MeteredExecutor, PostProcess, Task, plan_tasks
from knowmeter.samples import Sample, SampleSet, sample_set_hash
from knowmeter.store import (
    CaseFileInfo,
    ComprehensionSkill,
    ComprehensionTarget,
    Grader,
    Processed,
    RunComprehension,
    RunDir,
    RunRecord,
)
from knowmeter.watermark import Watermark

BASELINE_ARM = "baseline"
SKILL_ARM = "with-skill"


@dataclass(frozen=True, slots=True)
class Target:
    """What is measured: the skill file, its eval file (None: found beside it), n, the folder the
    agent works in (None: an empty one), and what the run carries from before it started: its
    ``flags`` (caveats: a grader calibration that missed) and ``notes`` (how the calibration went)."""

    skill: str
    evals: str | None
    ngram: int
    cwd: str | None = None
    flags: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class ComprehensionPlan:
    """A prepared comprehension run: the runner's ``Prepared`` plus the cases to grade."""

    prepared: Prepared
    inputs: Inputs
    target: Target

    @property
    def cases(self) -> dict[str, GraderCase]:
        return {c.case_id: c for c in self.inputs.cases}


def _workspace(config: RunConfig, target: Target) -> Path:
    if target.cwd is not None:
        cwd = (config.base_path() / target.cwd).resolve()
        if not cwd.is_dir():
            raise InputError(f"--cwd {target.cwd}: not a directory")
        return cwd
    empty = config.output_path() / "comprehension-workspace"
    empty.mkdir(parents=True, exist_ok=True)
    return empty


def _skill_variant(skill_md: Path, expression: str, cwd: Path) -> Variant:
    data = skill_md.read_bytes()
    per_file, digest = hash_files({skill_md.name: data})
    artifact = Artifact(
        kind="file", text=data.decode("utf-8", errors="replace"), path=skill_md, files=per_file, hash=digest
    )
    return Variant(SKILL_ARM, "treatment", artifact, expression, cwd)


def _sample_set(inputs: Inputs, shown: str) -> SampleSet:
    samples = tuple(
        Sample.from_record({"sample_id": c.case_id, "prompt": c.prompt, "comprehension": {**c.describe(), "n": c.n}})
        for c in inputs.cases
    )
    digest = sample_set_hash(samples).hexdigest()
    return SampleSet(samples, Watermark((shown,), len(samples), digest))


def prepare_comprehension(config: RunConfig, target: Target) -> ComprehensionPlan:
    """Load the skill and cases, build the two arms, the agent, the graders and the tasks."""
    base = config.base_path()
    inputs = load_inputs(base / target.skill, base / target.evals if target.evals else None, n=target.ngram)
    if not config.judges:
        raise InputError(
            "comprehend needs a grader: pass --judge executor:model (an LLM), or --judge "
            "scripted-grader for the deterministic offline stand-in"
        )
    cwd = _workspace(config, target)
    baseline = resolve_variant(
        "baseline", role="control", skill_dir=base, base_dir=base, cache_dir=base, name=BASELINE_ARM, cwd=cwd
    )
    variants = [baseline, _skill_variant(inputs.skill.path, target.skill, cwd)]
    sample_set = _sample_set(inputs, str(inputs.case_file.path))
    tasks = plan_tasks(sample_set.samples, variants, config.repeat, base)
    prepared = Prepared(
        config,
        sample_set,
        variants,
        _executor_from(config),
        tasks,
        {s.sample_id: [] for s in sample_set.samples},
        build_judges(config.judges),
    )
    return ComprehensionPlan(prepared, inputs, target)


def make_config(
    *,
    base_dir: Path,
    target: Target,
    executor: str,
    model: str | None,
    judges: list[str],
    repeat: int,
    judge_repeat: int,
    **settings: Any,
) -> RunConfig:
    """The run configuration recorded in ``run.json`` (arms: baseline → with-skill)."""
    return RunConfig(
        base_dir=str(base_dir),
        samples=[target.evals or target.skill],
        variants=[
            VariantSpec(name=BASELINE_ARM, role="control", expression="baseline"),
            VariantSpec(name=SKILL_ARM, role="treatment", expression=target.skill),
        ],
        executor=executor,
        model=model,
        judges=judges,
        repeat=repeat,
        judge_repeat=judge_repeat,
        **{k: v for k, v in settings.items() if v is not None},
    )


def comprehension_record(plan: ComprehensionPlan) -> RunComprehension:
    """The ``comprehension`` block of ``run.json``: what was measured and who graded."""
    skill, files, target = plan.inputs.skill, plan.inputs.case_file, plan.target
    return RunComprehension(
        target=ComprehensionTarget(
            skill=target.skill,
            evals=target.evals,
            ngram=target.ngram,
            cwd=target.cwd,
            flags=list(target.flags),
            notes=list(target.notes),
        ),
        skill=ComprehensionSkill(
            name=skill.name,
            path=str(skill.path),
            shape=skill.shape,
            audit_state=str(skill.audit_state_path) if skill.audit_state_path else None,
        ),
        eval_file=CaseFileInfo(path=str(files.path), format=files.format),
        cases=len(plan.inputs.cases),
        dimensions=sorted({c.dimension for c in plan.inputs.cases}, key=lambda d: int(d[1:])),
        notes=[*plan.inputs.notes, *target.notes],
        flags=list(target.flags),
        grader_prompt_hash=GRADER_TEMPLATE.hash,
        graders=[
            Grader(name=j.name, executor=j.executor.name, model=j.model, non_llm=j.executor.non_llm)
            for j in plan.prepared.judges
        ],
    )


def start_comprehension(plan: ComprehensionPlan) -> RunDir:
    """Create the run directory and its ``run.json``."""
    prepared = plan.prepared
    run_dir = RunDir.create(prepared.config.output_path() / "runs")
    record = run_record(prepared, run_dir.id)
    record.prompt_hashes = {"comprehension_grader": GRADER_TEMPLATE.hash}
    record.comprehension = comprehension_record(plan)
    run_dir.write_run(record)
    return run_dir


def reprepare(record: RunRecord) -> ComprehensionPlan:
    """The plan of a stored comprehension run (for ``--resume``)."""
    if record.comprehension is None:
        raise InputError(f"run {record.run_id} is not a comprehension run; resume it with knowmeter eval --resume")
    target = record.comprehension.target
    return prepare_comprehension(
        restore_secrets(record.config, str(Path(record.run_id) / "run.json")),  # redacted when stored
        Target(target.skill, target.evals, target.ngram, target.cwd, tuple(target.flags), tuple(target.notes)),
    )


#: The kind of call the graders' calls are charged to the budget as (``run.budget.calls``).
GRADER_KIND = "grader"


def make_grader(plan: ComprehensionPlan, budget: Budget) -> PostProcess:
    """Grade each finished answer; an agent error or timeout is an answer that is not there, so
    every behavior FAILs (``unanswered``). Every grader call is charged to ``budget`` (the run's,
    shared with the agent), as judge calls are."""
    cases = plan.cases
    cfg = plan.prepared.config
    judges = [
        JudgeSpec(j.name, MeteredExecutor(j.executor, budget, GRADER_KIND), j.model) for j in plan.prepared.judges
    ]

    async def post_process(task: Task, result: ExecResult) -> Processed:
        case = cases[task.sample.sample_id]
        if result.error is not None:
            return Processed(grade=None, comprehension=unanswered(case, f"the agent failed: {result.error}"))
        site = CallSite(task.id, task.sample.sample_id, cfg.timeout_s)
        comp = await grade_answer(case, result.output, judges, judge_repeat=cfg.judge_repeat, site=site)
        return Processed(grade=None, comprehension=comp)

    return post_process
