"""Every default value of a run, defined once.

The config models (``knowmeter.config``), the flag resolution (``knowmeter.evaluation``), the
decision settings (``knowmeter.compare.CompareConfig``), the statistics, the executors and the
CLI's ``--help`` texts all read these names, so a default changes in one line. The module imports
nothing: any package may use it without an import cycle.
"""

from __future__ import annotations

from typing import Literal, get_args

# --- where things are -------------------------------------------------------------------------
#: The run config looked for in the project folder, in this order.
CONFIG_FILES = ("eval.yaml", "eval.yml")
#: Where runs, the run index and the response cache are stored (``outputDir`` / ``--output-dir``).
OUTPUT_DIR = ".knowmeter"
#: Where a variant given as a bare ``<name>`` is looked up (``skillDir`` / ``--skill-dir``).
SKILL_DIR = "skills"
#: Seconds a reader or writer waits for another process's lock on a store's SQLite file (the run
#: index, the response cache).
SQLITE_TIMEOUT_S = 30.0
#: Folders never copied into a task's workspace, fingerprinted for the response cache's key, read
#: as knowledge by the offline agent, nor walked as a knowledge base (coverage, probe): version
#: control, knowmeter's own store, dependencies, caches.
IGNORED_DIRS: tuple[str, ...] = (".git", OUTPUT_DIR, "node_modules", "__pycache__", ".venv")
#: Names never counted as part of a skill folder's artifact (nor in its hash). Narrower than
#: ``IGNORED_DIRS``: a skill's own ``node_modules`` or ``.venv`` is part of what it ships.
ARTIFACT_IGNORED: tuple[str, ...] = (".git", "__pycache__", ".DS_Store", OUTPUT_DIR)

# --- grading ----------------------------------------------------------------------------------
#: A score layer: deterministic facts, observed behaviour, the LLM judges.
LayerName = Literal["fact", "behavior", "judge"]
#: The score layers in their canonical order (grading, the comparison and every report read this).
LAYERS: tuple[LayerName, ...] = get_args(LayerName)

# --- running ----------------------------------------------------------------------------------
#: The agent when none is configured: the built-in offline demo agent.
EXECUTOR = "offline"
#: Where tasks run (and ``observe`` scans): here, not on a Ray cluster.
BACKEND = "local"
#: Tasks run at once.
CONCURRENCY = 4
#: Seconds one task may run.
TIMEOUT_S = 300.0
#: Seconds an agent CLI or model API call may run when neither its options nor the task set one.
AGENT_TIMEOUT_S = 600.0
#: Retries of a task whose executor failed.
RETRY = 2
#: Stop a run when its first this many finished tasks all failed the same way (0: never).
MAX_ERRORS = 5
#: Real replicates per sample and variant.
REPEAT = 1
#: Judge calls per judge, dimension and task.
JUDGE_REPEAT = 1
#: Outputs longer than this many characters are graded and judged on their first this-many
#: (``maxGradedOutputChars`` in eval.yaml): a 20 MB answer made a 21 MB judge prompt and 30 s of
#: ROUGE. The stored output stays whole; the grade says what was cut (``output_truncated``).
MAX_GRADED_OUTPUT_CHARS = 200_000
#: Keep the judge prompt's length-debias instruction (``--no-length-debias`` drops it).
LENGTH_DEBIAS = True
#: Hedging candidates per evaluation sent to the hedging classifier's model (the rest stay regex-only).
HEDGING_MAX_CANDIDATES = 50

# --- statistics and the decision --------------------------------------------------------------
#: Seed of every statistical computation of a run.
SEED = 20260413
#: Bootstrap resamples of a confidence interval.
BOOTSTRAP_SAMPLES = 10_000
#: Resamples of a permutation test.
PERMUTATION_SAMPLES = 10_000
#: Confidence level of every interval.
CI_LEVEL = 0.95
#: Significance level of the tests.
ALPHA = 0.05
#: Power at which the minimum detectable effect is computed.
POWER = 0.8
#: Layer gate: each present layer's treatment mean must be at least this (scores 1–5).
LAYER_GATE = 3.5
#: A significant composite gain smaller than this many points is "trivially small".
MIN_EFFECT = 0.1
#: A non-significant comparison whose minimum detectable effect exceeds this many points is
#: UNDERPOWERED rather than NOISE.
MAX_MDE = 0.5
#: Fewer paired samples than this is underpowered (UNDERPOWERED, or CAUTIOUS for a win).
MIN_PAIRS = 20
#: Warn when more than this share of the composite's variance is run-to-run.
STABILITY_LIMIT = 0.5
#: ``eval --sequential``: the group-sequential design (design/decisions.md, "Sequential decisions")
#: and whether a look may stop for futility (``--futility``; off: a futility stop costs power).
SequentialDesign = Literal["haybittle-peto", "obf"]
SEQUENTIAL_DESIGNS: tuple[SequentialDesign, ...] = get_args(SequentialDesign)
SEQUENTIAL_DESIGN: SequentialDesign = "haybittle-peto"
FUTILITY = False

# --- other commands ---------------------------------------------------------------------------
#: ``comprehend``: n of the verbatim-overlap check (comprehension research, Appendix A.3).
VERBATIM_NGRAM = 6
#: ``probe``: at most this many competency questions, by the deterministic non-LLM generator
#: (``knowmeter.probe.HEADINGS_GENERATOR``), written to this file.
PROBE_COUNT = 20
PROBE_GENERATOR = "headings"
PROBE_OUT = "probe-samples.yaml"
#: ``view``: where the local run viewer listens.
VIEWER_HOST = "127.0.0.1"
VIEWER_PORT = 8765
