"""Sample loading: omk formats, JSONL, validation errors, the watermark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.samples import load_samples


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def test_omk_reference_files_load_unchanged(shared_dir: Path) -> None:
    omk = shared_dir / "reference" / "omk"
    cr = load_samples(omk / "code-review" / "eval-samples.json")
    assert [s.sample_id for s in cr.samples] == ["s001", "s002", "s003"]
    assert cr.samples[0].dimensions and "security" in cr.samples[0].dimensions
    rag = load_samples(omk / "rag-eval" / "eval-samples.yaml")
    assert rag.samples[0].assertions[0] == {"type": "faithfulness", "threshold": 4}
    gold = load_samples(omk / "gold-dataset" / "eval-samples.yaml")
    assert gold.watermark.count == len(gold.samples) == 10


def test_list_mapping_and_jsonl_forms_and_the_authors_own_keys_kept(tmp_path: Path) -> None:
    a = write(
        tmp_path,
        "a.yaml",
        "requires: {knowmeter: '>=0.1'}\nsamples:\n  - sample_id: x\n    prompt: hi\n"
        "    metadata: {my_key: {deep: 1}}\n    tripwire: true\n",
    )
    s = load_samples(a)
    assert s.requires == {"knowmeter": ">=0.1"}
    assert s.samples[0].to_record(omit_unset=True)["metadata"] == {"my_key": {"deep": 1}}
    assert s.samples[0].tripwire is True  # omk's key: kept as it is
    b = write(tmp_path, "b.jsonl", json.dumps({"sample_id": "y", "prompt": "p"}) + "\n\n")
    assert load_samples(b).samples[0].sample_id == "y"


def test_watermark_ignores_formatting_but_not_content(tmp_path: Path) -> None:
    a = write(tmp_path, "a.json", json.dumps([{"sample_id": "x", "prompt": "hi"}]))
    b = write(tmp_path, "b.yaml", "- prompt: hi\n  sample_id: x\n")
    c = write(tmp_path, "c.yaml", "- prompt: hi!\n  sample_id: x\n")
    wa, wb, wc = (load_samples(p).watermark for p in (a, b, c))
    assert wa.sha256 == wb.sha256 != wc.sha256
    assert len(wa.short) == 8 and wa.count == 1
    assert "absolute completeness" in wa.to_dict()["warning"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("dup.yaml", "- {sample_id: a, prompt: x}\n- {sample_id: a, prompt: y}\n", "duplicate sample_id 'a'"),
        ("noid.yaml", "- {prompt: x}\n", "sample #1: missing sample_id"),
        ("bad.yaml", "- sample_id: a\n  prompt: [unclosed\n", "line 3"),
        ("bad.jsonl", '{"sample_id": "a", "prompt": "x"}\n{oops\n', "line 2: invalid JSON"),
        ("type.yaml", "- {sample_id: a, prompt: x, difficulty: extreme}\n", "sample 'a': field 'difficulty'"),
        ("empty.yaml", "samples: []\n", "no samples"),
        ("scalar.yaml", "hello\n", "expected a list of samples"),
        (
            "skill.json",
            '{"skill_name": "s", "evals": [{"id": 1, "prompt": "x"}]}',
            "skill.json: a Skill Graph eval file ('evals' list of cases), not a sample file; measure the skill with "
            "it: knowmeter comprehend path/to/SKILL.md --evals ",
        ),
        (
            "typo.yaml",
            "- {sample_id: a, prompt: x, assertion: [{type: contains, value: y}]}\n",
            "sample 'a': unknown sample key 'assertion' (did you mean 'assertions'?); known keys: sample_id, prompt,",
        ),
        ("typo.jsonl", '{"sample_id": "a", "promt": "x"}\n', "sample 'a': unknown sample key 'promt' (did you mean"),
        (
            "twice.yaml",
            "- sample_id: a\n  prompt: x\n  sample_id: b\n",
            "line 3: duplicate key 'sample_id' (first on line 1)",
        ),
        ("twice.jsonl", '{"sample_id": "a", "prompt": "x", "sample_id": "b"}\n', "line 1: duplicate key 'sample_id'"),
        ("twice.json", '[{"sample_id": "a", "prompt": "x", "prompt": "y"}]', "duplicate key 'prompt' in one mapping"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, name: str, text: str, expected: str) -> None:
    p = write(tmp_path, name, text)
    with pytest.raises(InputError) as exc:
        load_samples(p)
    msg = str(exc.value)
    assert expected in msg and "\n" not in msg and name in msg


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_samples(tmp_path / "nope.yaml")


def test_a_byte_order_mark_is_read_past_in_every_format(tmp_path: Path) -> None:
    bom = "\ufeff"
    for name, text in (
        ("a.jsonl", json.dumps({"sample_id": "a", "prompt": "hi"}) + "\n"),
        ("a.json", json.dumps([{"sample_id": "a", "prompt": "hi"}])),
        ("a.yaml", "- {sample_id: a, prompt: hi}\n"),
    ):
        assert load_samples(write(tmp_path, name, bom + text)).samples[0].sample_id == "a", name


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path: Path) -> None:
    text = "base: &b {prompt: general, rubric: r}\nsamples:\n- {<<: *b, sample_id: a, prompt: specific}\n"
    sample = load_samples(write(tmp_path, "m.yaml", text)).samples[0]
    assert (sample.prompt, sample.rubric) == ("specific", "r")
