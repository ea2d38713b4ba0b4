"""An activation run on the ordinary runner: every case × repeat × arm is a task (same plan
order, cache, budget, results file and sealing as ``knowmeter eval``) whose agent sees only that
case's skills — the skill under test (the arm's version) and the case's distractors — installed
as skills (``delivery: skill``), in an empty workspace of its own. Each finished task's trace is
read at once for which skills were loaded (``detect_activations``) and stored with the task."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from knowmeter.activation._cases import ActivationCase, CaseFile, load_activation_cases
from knowmeter.activation._detect import Counts, Detection, detect_activations
from knowmeter.activation._stats import Trial
from knowmeter.artifacts import Artifact, Variant, hash_files
from knowmeter.config import RunConfig, VariantSpec
from knowmeter.errors import InputError
from knowmeter.evaluation import Prepared, _executor_from, run_record
from knowmeter.executors import ExecResult, SkillInstall
from knowmeter.runner import PostProcess, Task
from knowmeter.samples import Sample, SampleSet, sample_set_hash
from knowmeter.store import (
    ActivationTarget,
    CaseFileInfo,
    Processed,
    RunActivation,
    RunDir,
    StoredActivationCase,
    TaskRecord,
)
from knowmeter.watermark import Watermark

__all__ = ["CONTROL", "SKILL_EXECUTORS", "TREATMENT", "ActivationPlan", "Target", "prepare_activation", "trials_of"]

CONTROL, TREATMENT = "A", "B"
#: Executors that can deliver a skill as a skill (the agent decides whether to load it).
SKILL_EXECUTORS = ("claude", "claude-sdk", "codex", "offline")
_DESCRIPTION_LINE = re.compile(r"^description:.*(?:\n[ \t]+.*)*$", re.M)


@dataclass(frozen=True, slots=True)
class Target:
    """What is measured: the skill (SKILL.md or its folder), the case files (none: the skill's
    own examples / anti_examples), the B version (another SKILL.md, or a new ``description``),
    the folders distractor names are looked up in, default distractors, which loads count, and
    whether the A/B is also judged on a held-out split."""

    skill: str
    case_files: tuple[str, ...] = ()
    against: str | None = None
    description: str | None = None
    skills_dirs: tuple[str, ...] = ()
    #: distractors installed in every case that names none of its own
    distractors: tuple[str, ...] = ()
    counts: Counts = "either"
    split: bool = False


@dataclass
class ActivationPlan:
    """A prepared activation run: the runner's ``Prepared`` plus the cases and skills."""

    prepared: Prepared
    target: Target
    skill: str
    files: list[CaseFile]
    cases: dict[str, ActivationCase]
    distractors: dict[str, SkillInstall] = field(default_factory=dict)


def _skill_md(path: Path) -> Path:
    path = path / "SKILL.md" if path.is_dir() else path
    if not path.is_file():
        raise InputError(f"{path}: no SKILL.md there; name a SKILL.md or the folder holding one")
    return path


def _frontmatter_name(path: Path, text: str) -> str:
    match = re.search(r"^name:[ \t]*(.+)$", text.split("\n---", 1)[0], re.M) if text.startswith("---") else None
    if match is None:
        raise InputError(f"{path}: the frontmatter has no 'name'; a skill is found and loaded by its name")
    return match.group(1).strip().strip("\"'")


def _install(path: Path) -> tuple[SkillInstall, str]:
    md = _skill_md(path)
    text = md.read_text(encoding="utf-8-sig")  # a byte-order mark is not part of the frontmatter
    name = _frontmatter_name(md, text)
    return SkillInstall(name, md.parent, text), name


def with_description(path: Path, text: str, description: str) -> str:
    """``text`` (a SKILL.md) with its frontmatter ``description`` replaced (a quoted one-liner)."""
    head, sep, body = text.partition("\n---")
    if not text.startswith("---") or not sep:
        raise InputError(f"{path}: no frontmatter to put the new description in")
    line = "description: " + '"' + description.replace("\\", "\\\\").replace('"', '\\"') + '"'
    new_head, n = _DESCRIPTION_LINE.subn(lambda _: line, head, count=1)
    if n == 0:
        new_head = head + "\n" + line
    return new_head + sep + body


def _variant(name: str, role: str, install: SkillInstall, expression: str, cwd: Path) -> Variant:
    files = {"SKILL.md": install.text.encode()}
    if install.source_dir is not None:
        files |= {
            p.relative_to(install.source_dir).as_posix(): p.read_bytes()
            for p in sorted(install.source_dir.rglob("*"))
            if p.is_file() and p.name != "SKILL.md"
        }
    per_file, digest = hash_files(files)
    artifact = Artifact(
        kind="skill_dir",
        text=install.text,
        path=install.source_dir,
        root=install.source_dir,
        files=per_file,
        hash=digest,
    )
    return Variant(name, role, artifact, expression, cwd)  # type: ignore[arg-type]


def _find_distractor(ref: str, case_file: Path, case_id: str, dirs: list[Path]) -> Path:
    candidates = [case_file.parent / ref] if ("/" in ref or ref.endswith(".md")) else []
    candidates += [d / ref for d in dirs]
    for c in candidates:
        if (c / "SKILL.md").is_file() or (c.is_file() and c.suffix == ".md"):
            return c
    looked = ", ".join(str(d) for d in dirs) or "(none)"
    raise InputError(
        f"{case_file}: case {case_id!r}: distractor {ref!r} not found (looked for {ref}/SKILL.md in {looked}); "
        "pass --skills-dir with the folder that holds it"
    )


def _sample_id(case: ActivationCase, file: CaseFile, several: bool) -> str:
    raw = f"{file.path.stem}.{case.case_id}" if several else case.case_id
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.") or "case"


def _case_set_hash(
    samples: tuple[Sample, ...], cases: dict[str, ActivationCase], installs: dict[str, tuple[SkillInstall, ...]]
) -> str:
    """The hash every figure depends on: the prompts and, per case, what should fire and the text of
    every distractor installed beside it (editing a label or a distractor makes a new case set)."""
    h = sample_set_hash(samples)
    for sid, case in cases.items():
        labels = {"should_trigger": case.should_trigger, "expected_winner": case.expected_winner}
        h.update(json.dumps([sid, labels, [s.text for s in installs[sid]]], sort_keys=True).encode())
    return h.hexdigest()


def prepare_activation(config: RunConfig, target: Target) -> ActivationPlan:
    """Load the skill, its B version, the cases and their distractors; plan the tasks."""
    base = config.base_path()
    skill_path = (base / target.skill).resolve()
    control, name = _install(skill_path)
    dirs = [(base / d).resolve() for d in target.skills_dirs] or [control.source_dir.parent]  # type: ignore[union-attr]
    files = [load_activation_cases(base / f, name) for f in target.case_files] or [
        load_activation_cases(_skill_md(skill_path), name)
    ]
    workspace = config.output_path() / "activation" / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    variants = [_variant(CONTROL, "control", control, target.skill, workspace)]
    if target.against is not None or target.description is not None:
        if target.against is not None:
            other, other_name = _install((base / target.against).resolve())
            if other_name != name:
                raise InputError(
                    f"{target.against}: its name is {other_name!r}, not {name!r}; the two versions must share a name"
                )
        else:
            assert target.description is not None
            other = SkillInstall(
                name, control.source_dir, with_description(skill_path, control.text, target.description)
            )
        variants.append(_variant(TREATMENT, "treatment", other, target.against or "description", workspace))
    plan_cases: dict[str, ActivationCase] = {}
    distractors: dict[str, SkillInstall] = {}
    per_case: dict[str, tuple[SkillInstall, ...]] = {}
    for file in files:
        for case in file.cases:
            sid = _sample_id(case, file, len(files) > 1)
            if sid in plan_cases:
                raise InputError(f"{file.path}: case {case.case_id!r}: id {sid!r} used twice; give it another id")
            installs: list[SkillInstall] = []
            if not case.distractors and target.distractors:
                case = replace(case, distractors=target.distractors)
            for ref in case.distractors:
                path = _find_distractor(ref, file.path, case.case_id, dirs)
                key = str(path.resolve())
                if key not in distractors:
                    distractors[key], _ = _install(path)
                if _frontmatter_name(path, distractors[key].text) == name:
                    raise InputError(f"{file.path}: case {case.case_id!r}: distractor {ref!r} is the skill under test")
                if any(i.name == distractors[key].name for i in installs):
                    raise InputError(
                        f"{file.path}: case {case.case_id!r}: two distractors are named {distractors[key].name!r}"
                    )
                installs.append(distractors[key])
            plan_cases[sid] = case
            per_case[sid] = tuple(installs)
    samples = tuple(Sample(sample_id=sid, prompt=c.prompt) for sid, c in plan_cases.items())
    digest = _case_set_hash(samples, plan_cases, per_case)
    sample_set = SampleSet(samples, Watermark(tuple(str(f.path) for f in files), len(samples), digest))
    tasks = [
        Task(sample, variant, r, workspace, skills=per_case[sample.sample_id])
        for r in range(config.repeat)
        for sample in samples
        for variant in variants
    ]
    prepared = Prepared(config, sample_set, variants, _executor_from(config), tasks, {}, [])
    return ActivationPlan(prepared, target, name, files, plan_cases, distractors)


def make_config(
    *, base_dir: Path, target: Target, executor: str, executor_options: dict[str, Any], **settings: Any
) -> RunConfig:
    """The run configuration (``run.json``): the skill delivered as a skill, whatever the executor."""
    if executor not in SKILL_EXECUTORS:
        raise InputError(
            f"--executor {executor}: it has no skills mechanism to measure; activation runs on "
            f"{', '.join(SKILL_EXECUTORS)}"
        )
    if executor == "codex" and target.counts == "skill-tool":
        raise InputError(
            "--counts skill-tool: codex has no Skill tool (it reads SKILL.md); use --counts read or either"
        )
    options = {**executor_options}
    tools = options.get("tools")
    listed = [str(t).strip() for t in (tools.split(",") if isinstance(tools, str) else tools or ["default"])]
    no_skill_tool = listed != ["default"] and "Skill" not in listed
    if executor in ("claude", "claude-sdk") and no_skill_tool and target.counts != "read":
        raise InputError(
            f"-O tools={','.join(listed)}: without the Skill tool the agent cannot load a skill through "
            "it; add Skill, or count reads of SKILL.md only (--counts read)"
        )
    if options.setdefault("delivery", "skill") != "skill":
        raise InputError(f"--executor-option delivery={options['delivery']}: activation needs delivery=skill")
    specs = [VariantSpec(name=CONTROL, role="control", expression=target.skill)]
    if target.against is not None or target.description is not None:
        specs.append(VariantSpec(name=TREATMENT, role="treatment", expression=target.against or target.skill))
    return RunConfig(
        base_dir=str(base_dir),
        samples=list(target.case_files) or [target.skill],
        variants=specs,
        executor=executor,
        executor_options=options,
        **{k: v for k, v in settings.items() if v is not None},
    )


def start_activation(plan: ActivationPlan, runs_root: Path) -> RunDir:
    """Create the run's folder under ``runs_root`` and its ``run.json``."""
    prepared = plan.prepared
    run_dir = RunDir.create(runs_root)
    record = run_record(prepared, run_dir.id)
    t = plan.target
    record.activation = RunActivation(
        target=ActivationTarget(
            skill=t.skill,
            case_files=list(t.case_files),
            against=t.against,
            description=t.description,
            skills_dirs=list(t.skills_dirs),
            distractors=list(t.distractors),
            counts=t.counts,
            split=t.split,
        ),
        skill=plan.skill,
        case_files=[CaseFileInfo(path=str(f.path), format=f.format) for f in plan.files],
        notes=[n for f in plan.files for n in f.notes],
        cases={
            sid: StoredActivationCase(
                case_id=c.case_id,
                prompt=c.prompt,
                should_trigger=c.should_trigger,
                distractors=list(c.distractors),
                expected_winner=c.expected_winner,
            )
            for sid, c in plan.cases.items()
        },
    )
    run_dir.write_run(record)
    return run_dir


def make_detector(plan: ActivationPlan) -> PostProcess:
    """Read each finished task's trace for the skills it loaded (stored as ``activation``)."""

    async def post_process(task: Task, result: ExecResult) -> Processed:
        names = [plan.skill, *(s.name for s in task.skills)]
        detection = detect_activations(result.trace, names, plan.target.counts)
        return Processed(grade=None, activation=detection)

    return post_process


def _how(d: Detection, skill: str) -> str | None:
    tool, read = d.skill_tool.get(skill, False), d.read.get(skill, False)
    return "both" if tool and read else "skill-tool" if tool else "read" if read else None


def trials_of(records: Iterable[TaskRecord], cases: dict[str, ActivationCase], skill: str) -> dict[str, list[Trial]]:
    """The trials of each arm from the run's stored task records."""
    arms: dict[str, list[Trial]] = {}
    for rec in records:
        case = cases.get(rec.sample_id)
        if case is None:
            continue
        error = rec.exec.error
        d = rec.activation if not error else None
        arms.setdefault(rec.variant, []).append(
            Trial(
                rec.sample_id,
                rec.repeat,
                case.should_trigger,
                None if d is None else d.activated(skill),
                () if d is None else d.order,
                None if d is None else _how(d, skill),
                case.expected_winner,
                error,
            )
        )
    return arms
