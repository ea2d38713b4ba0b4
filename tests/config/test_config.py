"""Configuration: eval.yaml keys, flags override the file, defaults in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.evaluation import Overrides, resolve_config


def write(tmp: Path, text: str) -> Path:
    (tmp / "eval.yaml").write_text(text)
    (tmp / "s.yaml").write_text("- {sample_id: a, prompt: x}\n")
    return tmp


def test_file_values_and_flag_overrides(tmp_path: Path) -> None:
    write(
        tmp_path,
        "samples: s.yaml\nvariants:\n  - {name: c, artifact: baseline}\n  - {name: t, artifact: baseline}\n"
        "executor: offline\nconcurrency: 3\ntimeoutMs: 5000\nrepeat: 2\nnoCache: true\n"
        "budget: {totalUSD: 2, perSampleUSD: 0.5, perSampleMs: 1000}\n",
    )
    cfg = resolve_config(Overrides(), tmp_path)
    assert [(v.name, v.role) for v in cfg.variants] == [("c", "control"), ("t", "treatment")]
    assert (cfg.concurrency, cfg.repeat, cfg.no_cache, cfg.budget_total_usd, cfg.budget_per_task_usd) == (
        3,
        2,
        True,
        2,
        0.5,
    )
    assert cfg.timeout_s == 1.0  # perSampleMs caps the per-task timeout
    cfg2 = resolve_config(Overrides(concurrency=9, control="baseline", treatments=["x", "y"], budget_usd=1.0), tmp_path)
    assert cfg2.concurrency == 9 and cfg2.budget_total_usd == 1.0
    assert [(v.expression, v.role) for v in cfg2.variants] == [
        ("baseline", "control"),
        ("x", "treatment"),
        ("y", "treatment"),
    ]


def test_defaults_without_a_file(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.yaml").write_text("- {sample_id: a, prompt: x}\n")
    cfg = resolve_config(Overrides(control="baseline"), tmp_path)
    assert cfg.samples == ["eval-samples.yaml"] and cfg.executor == "offline" and cfg.repeat == 1
    assert cfg.layer_gate == 3.5 and cfg.bootstrap_samples == 10_000


def test_decision_rules_from_the_file_and_flags(tmp_path: Path) -> None:
    write(
        tmp_path,
        "samples: s.yaml\nvariants: [{artifact: baseline}]\n"
        "gates: {layerGate: 3.0, maxMde: 0.8, minPairs: 10, stabilityLimit: 0.7}\n",
    )
    cfg = resolve_config(Overrides(), tmp_path)
    assert (cfg.layer_gate, cfg.max_mde, cfg.min_pairs, cfg.stability_limit) == (3.0, 0.8, 10, 0.7)
    flags = resolve_config(Overrides(threshold=4.0, max_mde=0.3, min_pairs=50, stability_limit=0.2), tmp_path)
    assert (flags.layer_gate, flags.max_mde, flags.min_pairs, flags.stability_limit) == (4.0, 0.3, 50, 0.2)
    (tmp_path / "eval.yaml").write_text("samples: s.yaml\nvariants: [{artifact: baseline}]\n")
    default = resolve_config(Overrides(), tmp_path)
    assert (default.max_mde, default.min_pairs, default.stability_limit) == (0.5, 20, 0.5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\ngates: {minPairs: 1}\n", "gates.minPairs"),
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\ngates: {stabilityLimit: 1.5}\n", "gates.stabilityLimit"),
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\nrepeats: 2\n", "unknown config key 'repeats'"),
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\nconcurrency: 0\n", "concurrency"),
        ("samples: s.yaml\nvariants: [{artifact: baseline, role: judge}]\n", "variants.0.role"),
        (
            "samples: s.yaml\nvariants: [{artifact: a, role: control}, {artifact: b, role: control}]\n",
            "more than one control",
        ),
        ("samples: [s.yaml\n", "line 2"),
        (
            "samples: s.yaml\nvariants: [{artifact: baseline}]\nrepeat: true\n",
            "repeat: Input should be a valid integer",
        ),
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\nrepeat: 2.5\n", "repeat: Input should be a valid integer"),
        ("samples: s.yaml\nvariants: [{artifact: baseline}]\nbudget: {totalUSD: false}\n", "valid number"),
        (
            "samples: s.yaml\nrepeat: 3\nvariants: [{artifact: baseline}]\nrepeat: 1\n",
            "line 4: duplicate key 'repeat' (first on line 2) in one mapping; keep one of them",
        ),
        (
            "samples: s.yaml\nvariants: [{artifact: baseline}]\ngates: {layergate: 4}\n",
            "unknown config key 'gates.layergate' (did you mean 'layerGate'?); known keys of gates: maxGapRate, "
            "gapRateRegression, layerGate, minEffect, maxMde, minPairs, stabilityLimit",
        ),
        (
            "samples: s.yaml\nvariants: [{artifact: baseline}]\nbudget: {totalUsd: 5}\n",
            "unknown config key 'budget.totalUsd' (did you mean 'totalUSD'?); known keys of budget: totalUSD, "
            "perSampleUSD, perSampleMs",
        ),
        (
            "samples: s.yaml\nvariants: [{artifact: baseline, rol: control}]\n",
            "unknown config key 'variants.0.rol' (did you mean 'role'?); known keys of variants.0: name, role, "
            "artifact, cwd",
        ),
        (
            "samples: s.yaml\nvariants: [{artifact: baseline}]\nexecutor: {name: script, commnd: x}\n",
            "unknown config key 'executor.commnd'; known keys of executor: name, model, options",
        ),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, text)
    with pytest.raises(InputError) as exc:
        resolve_config(Overrides(), tmp_path)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_an_eval_yaml_that_is_no_file_is_one_line(tmp_path: Path) -> None:
    """A folder named eval.yaml was passed over in silence: the run then asked for the variants the
    config would have given."""
    (tmp_path / "eval.yaml").mkdir()
    with pytest.raises(InputError, match=r"eval\.yaml: a folder, a named pipe or a device where the config file"):
        resolve_config(Overrides(), tmp_path)
