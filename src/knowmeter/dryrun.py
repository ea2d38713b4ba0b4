"""``eval --dry-run``: what a run would do, cost, take and be able to detect — before paying.

The plan is the run's own (``evaluation.prepare``: samples, variants, repeats, agent, judges).
Cost and wall time come, in this order, from

1. the stored runs of the same executor (identity and model), judges and sample set (watermark):
   the tasks' known cost (agent + judges) and duration, resampled (seeded bootstrap over the
   stored tasks) to a 95% range of the planned run's total, widened to hold each stored run's own
   figure; the wall time from their wall time per round of concurrent tasks (±``WALL_SPREAD``);
   tasks with an answer in the response cache cost nothing and take no time;
2. else, for a model API agent (``openai`` / ``anthropic``) whose model is in the price table, the
   prompt's and artifact's characters as tokens (3–5 characters a token) and 50–1000 output
   tokens a task, at list price — the agent only;
3. else unknown (a non-LLM agent and judges cost $0).

What the run can detect comes from the composite's paired standard deviation in the latest
stored run of the same sample set: the minimum detectable effect at the planned number of
samples, and the samples needed for ``max_mde``. Nothing is run, spent or stored.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from knowmeter import defaults
from knowmeter.errors import InputError
from knowmeter.evaluation import Prepared
from knowmeter.stats import minimum_detectable_effect, n_for_effect
from knowmeter.store import RunDir, RunRecord, TaskRecord, task_records

#: Characters a token, lowest and highest (English and code text), and output tokens a task.
CHARS_PER_TOKEN = (3.0, 5.0)
OUTPUT_TOKENS = (50, 1000)
#: How much a wall time may differ from a stored run's, either way.
WALL_SPREAD = 0.5


@dataclass(frozen=True)
class Estimate:
    """An estimate with its range and what it is from (``estimate`` None: unknown)."""

    estimate: float | None
    low: float | None
    high: float | None
    source: str


@dataclass(frozen=True)
class Detectable:
    """The minimum detectable effect at the planned samples and the samples needed for ``effect``."""

    mde: float | None
    n_needed: int | None
    effect: float
    sd: float | None
    source: str


@dataclass
class DryRun:
    """What ``eval`` would do (``lines`` prints it)."""

    samples: int
    variants: list[tuple[str, str]]
    repeat: int
    tasks: int
    agent: str
    model: str | None
    judges: list[str]
    judge_calls: int
    cached: int | None
    concurrency: int
    budget_usd: float | None
    cost: Estimate
    wall_s: Estimate
    detectable: Detectable
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """The plan as printed by ``eval --dry-run``."""
        per_variant = " · ".join(f"{n} ({role}): {self.samples * self.repeat} tasks" for n, role in self.variants)
        out = [
            "DRY RUN — nothing was run, spent or stored",
            f"plan: {self.samples} samples × {len(self.variants)} variants × {self.repeat} repeat(s) = "
            f"{self.tasks} tasks · {per_variant}",
            f"agent: {self.agent}" + (f" · model {self.model}" if self.model else ""),
            "judges: " + (f"{', '.join(self.judges)} · {self.judge_calls} calls" if self.judges else "none"),
            "cache: off (--no-cache)"
            if self.cached is None
            else f"cache: {self.cached} of {self.tasks} tasks have a stored answer (they cost nothing)",
            f"cost: {_range(self.cost, _usd)} — {self.cost.source}",
            f"wall time: {_range(self.wall_s, _duration)} at concurrency {self.concurrency} — {self.wall_s.source}",
        ]
        d = self.detectable
        if d.mde is None:
            out.append(f"detectable: unknown — {d.source}")
        else:
            need = f"{d.n_needed} samples would detect {d.effect:g} points (max_mde)" if d.n_needed else ""
            out.append(
                f"detectable: minimum detectable effect {d.mde:.2f} points at {self.samples} samples "
                f"({int(defaults.POWER * 100)}% power, α {defaults.ALPHA}); {need} — {d.source}"
            )
        if self.budget_usd is not None and self.cost.high is not None and self.cost.high > self.budget_usd:
            out.append(
                f"⚠ budget ${self.budget_usd:g}: the run may cost up to {_usd(self.cost.high)}; the budget stops it "
                "before its end if it does"
            )
        return out + self.notes


def _usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    return f"{minutes}m {sec:02d}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60:02d}m"


def _range(e: Estimate, fmt: Any) -> str:
    if e.estimate is None:
        return "unknown"
    if e.low is None or e.high is None or e.low == e.high == e.estimate:
        return f"{fmt(e.estimate)}"
    return f"about {fmt(e.estimate)} [{fmt(e.low)}, {fmt(e.high)}]"


def plan_dry_run(prepared: Prepared, cached: int | None) -> DryRun:
    """The dry run of ``prepared`` (``cached``: planned tasks whose answer the cache holds; None
    with the cache off)."""
    cfg = prepared.config
    stored = _matching_runs(prepared)
    judge_calls = _judge_calls(prepared)
    paid = len(prepared.tasks) - (cached or 0)
    cost, wall = _from_stored(stored, paid, len(prepared.tasks), cfg.concurrency, cfg.seed)
    if cost is None or wall is None:
        cost, wall = _from_prices(prepared, paid)
    return DryRun(
        samples=len(prepared.sample_set.samples),
        variants=[(v.name, v.role) for v in prepared.variants],
        repeat=cfg.repeat,
        tasks=len(prepared.tasks),
        agent=prepared.executor.name,
        model=cfg.model,
        judges=[f"{j.name}" for j in prepared.judges],
        judge_calls=judge_calls,
        cached=cached,
        concurrency=cfg.concurrency,
        budget_usd=cfg.budget_total_usd,
        cost=cost,
        wall_s=wall,
        detectable=_detectable(prepared),
    )


def _judge_calls(prepared: Prepared) -> int:
    judged = sum(1 for t in prepared.tasks if t.sample.rubric or t.sample.dimensions)
    return judged * prepared.config.judge_repeat * len(prepared.judges)


def _runs(prepared: Prepared) -> list[tuple[Path, RunRecord]]:
    """The stored eval runs of the store, with their run.json, newest first (unreadable ones skipped)."""
    root = prepared.config.output_path() / "runs"
    found = []
    for path in sorted(root.iterdir(), reverse=True) if root.is_dir() else ():
        try:
            found.append((path, RunDir(path).read_run()))
        except InputError:
            continue
    return [(p, r) for p, r in found if r.comprehension is None]


_Stored = tuple[str, RunRecord, list[TaskRecord]]


def _matching_runs(prepared: Prepared) -> list[_Stored]:
    """Finished runs of the same executor, model, judges and sample set: (id, run.json, their
    tasks that did not error)."""
    cfg = prepared.config
    judges = [(j.name, j.executor.name, j.model) for j in prepared.judges]
    out = []
    for path, run in _runs(prepared):
        same = (
            run.executor.identity == prepared.executor.identity()
            and run.executor.model == cfg.model
            and run.watermark.sha256 == prepared.sample_set.watermark.sha256
            and [(j.name, j.executor, j.model) for j in run.judges] == judges
            and run.status not in ("running", None)
        )
        if same:
            records = _records(path / "results.jsonl")
            if records:
                out.append((run.run_id, run, records))
    return out


def _records(path: Path) -> list[TaskRecord]:
    """The stored tasks of a results file that did not error (none when the file was edited)."""
    try:
        return [rec for rec in task_records(path) if not rec.exec.error]
    except (OSError, InputError):
        return []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _task_figures(rec: TaskRecord) -> tuple[float | None, float | None]:
    """A stored task's agent cost (of its answer, cached or not) and its judges' cost."""
    return rec.exec.cost_usd, rec.grade.judge_cost_usd if rec.grade is not None else 0.0


def _from_stored(
    stored: list[_Stored], paid: int, tasks: int, concurrency: int, seed: int
) -> tuple[Estimate | None, Estimate | None]:
    """Cost (``paid`` agent calls, judges on every task) and wall time from stored runs."""
    if not stored:
        return None, None
    ids = ", ".join(run_id for run_id, _, _ in stored[:3]) + (" …" if len(stored) > 3 else "")
    source = f"from {len(stored)} stored run(s) of the same agent, model, judges and sample set ({ids})"
    per_run = []
    known_all = []
    for _, _, records in stored:
        known = [f for f in map(_task_figures, records) if f[0] is not None and f[1] is not None]
        known_all += known
        if known:
            per_run.append(paid * float(np.mean([a for a, _ in known])) + tasks * float(np.mean([j for _, j in known])))
    cost = Estimate(None, None, None, f"the stored run(s) ({ids}) have no known cost")
    if known_all:
        arr = np.array(known_all, dtype=np.float64)
        idx = np.random.default_rng(seed).integers(0, len(arr), size=(defaults.BOOTSTRAP_SAMPLES, len(arr)))
        totals = paid * arr[idx, 0].mean(axis=1) + tasks * arr[idx, 1].mean(axis=1)
        point = paid * float(arr[:, 0].mean()) + tasks * float(arr[:, 1].mean())
        low = min(float(np.quantile(totals, 0.025)), *per_run)
        high = max(float(np.quantile(totals, 0.975)), *per_run)
        unknown = sum(len(records) for _, _, records in stored) - len(known_all)
        more = f"; {unknown} stored task(s) of unknown cost not counted" if unknown else ""
        cost = Estimate(point, low, high, f"{source}, {len(arr)} tasks of known cost, 95% bootstrap range{more}")
    return cost, _wall(stored, paid, concurrency, source)


def _wall(stored: list[_Stored], paid: int, concurrency: int, source: str) -> Estimate:
    """The time the tasks take: each stored run's wall time per round of ``concurrency`` tasks it
    ran uncached, times the planned rounds; the range holds every stored run's figure and
    ``WALL_SPREAD`` either side (machine load and the agent's latency vary between runs by more
    than one stored run can tell)."""
    if not paid:
        return Estimate(0.0, 0.0, 0.0, "every task's answer is in the cache")
    rounds = math.ceil(paid / concurrency)
    per_round = []
    for _, run, records in stored:
        wall, conc = run.wall_s, run.config.concurrency
        ran = sum(1 for rec in records if not rec.cached)
        if wall is not None and conc > 0 and ran:
            per_round.append(wall / math.ceil(ran / conc))
    if not per_round:
        return Estimate(None, None, None, "no stored run of the same agent, model, judges and sample set ran uncached")
    point = rounds * float(np.mean(per_round))
    return Estimate(
        point,
        rounds * min(per_round) * (1 - WALL_SPREAD),
        rounds * max(per_round) * (1 + WALL_SPREAD),
        f"{source}: the tasks' execution and grading (starting up and the report add a second or two), "
        f"±{WALL_SPREAD:.0%} for load",
    )


def _from_prices(prepared: Prepared, paid: int) -> tuple[Estimate, Estimate]:
    """Cost from the planned prompts' size and the price table (model API agents only)."""
    from knowmeter.executors import PRICES_AS_OF, price_for

    wall = Estimate(None, None, None, "no stored run of the same agent, model, judges and sample set")
    judges_free = all(j.executor.non_llm for j in prepared.judges)
    if prepared.executor.non_llm and judges_free:
        return Estimate(0.0, 0.0, 0.0, "a non-LLM agent and judges call no model"), wall
    price = price_for(prepared.config.model) if prepared.executor.name in ("openai", "anthropic") else None
    if price is None or not paid:
        why = "no stored run of the same agent, model, judges and sample set, and " + (
            f"no list price for model {prepared.config.model!r}"
            if prepared.executor.name in ("openai", "anthropic")
            else f"a {prepared.executor.name} agent's tokens cannot be told from its prompts"
        )
        return Estimate(None, None, None, why), wall
    chars = [
        len(t.sample.full_prompt()) + len(t.variant.artifact.text or "") for t in prepared.tasks[:paid]
    ]  # the paid tasks' share of the prompts: the plan's order is not the cache's, so an approximation
    total_chars = sum(chars)

    def at(chars_per_token: float, output: int) -> float:
        return (total_chars / chars_per_token * price.input + paid * output * price.output) / 1e6

    low, high = at(CHARS_PER_TOKEN[1], OUTPUT_TOKENS[0]), at(CHARS_PER_TOKEN[0], OUTPUT_TOKENS[1])
    judges = "" if judges_free else "; the judges' calls are not counted (unknown)"
    source = (
        f"from the prompts' size ({CHARS_PER_TOKEN[0]:g}–{CHARS_PER_TOKEN[1]:g} characters a token) and "
        f"{OUTPUT_TOKENS[0]}–{OUTPUT_TOKENS[1]} output tokens a task at the list price of {prepared.config.model} "
        f"(as of {PRICES_AS_OF}){judges}"
    )
    return Estimate(at(sum(CHARS_PER_TOKEN) / 2, sum(OUTPUT_TOKENS) // 2), low, high, source), wall


def _detectable(prepared: Prepared) -> Detectable:
    """The MDE at the planned samples from the latest stored report of the same sample set."""
    cfg = prepared.config
    sha = prepared.sample_set.watermark.sha256
    n = len(prepared.sample_set.samples)
    for path, run in _runs(prepared):
        if run.watermark.sha256 != sha:
            continue
        try:
            report = json.loads((path / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for comp in report.get("comparisons") or []:
            composite = (comp.get("metrics") or {}).get("composite") or {}
            sd = _number(composite.get("sd_diff"))
            if sd is not None:
                return Detectable(
                    minimum_detectable_effect(sd, n),
                    n_for_effect(cfg.max_mde, sd),
                    cfg.max_mde,
                    sd,
                    f"from the composite's paired SD {sd:.2f} in run {path.name} ({comp.get('treatment')} vs "
                    f"{comp.get('control')}, same sample set, {run.config.repeat} repeat(s))",
                )
    return Detectable(
        None, None, cfg.max_mde, None, "no stored run of this sample set with a paired comparison to take a SD from"
    )
