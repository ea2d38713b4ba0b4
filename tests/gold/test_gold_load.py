"""Gold directories: the omk reference set loads; bad input is one clear line naming file and sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.gold import GoldScale, init_gold, load_gold


@pytest.fixture
def omk_gold(shared_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "gold"
    shutil.copytree(shared_dir / "reference" / "omk" / "gold-dataset" / "gold", target)
    return target


def test_loads_the_omk_reference_gold_set(omk_gold: Path) -> None:
    gold = load_gold(omk_gold)
    assert gold.metadata.annotator == "claude-opus-4-7-1m"
    assert gold.metadata.annotated_at == "2026-04-25" and gold.metadata.version == "0.1"
    assert (gold.metadata.scale.min, gold.metadata.scale.max) == (1, 5)
    assert len(gold.annotations) == 10
    assert gold.scores()["code_sql_injection"] == 4 and gold.scores()["reasoning_math_word"] == 5
    assert gold.annotations[0].reason and "SQL" in gold.annotations[0].reason


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_score_outside_the_scale_names_file_and_sample(omk_gold: Path) -> None:
    _replace(omk_gold / "annotations.yaml", "score: 3\n", "score: 7\n")
    with pytest.raises(InputError) as exc:
        load_gold(omk_gold)
    message = str(exc.value)
    assert "annotations.yaml" in message and "'code_missing_error_handling'" in message
    assert "outside the declared scale 1–5" in message and "\n" not in message


def test_a_narrower_declared_scale_is_enforced(omk_gold: Path) -> None:
    _replace(omk_gold / "metadata.yaml", "scale: { min: 1, max: 5 }", "scale: { min: 1, max: 4 }")
    with pytest.raises(InputError, match="'reasoning_math_word': score 5 is outside the declared scale 1–4"):
        load_gold(omk_gold)


@pytest.mark.parametrize(
    ("file", "old", "new", "match"),
    [
        ("annotations.yaml", "score: 4\n", "score: null\n", "score is empty"),
        ("annotations.yaml", "score: 4\n", "score: high\n", "not a number"),
        ("annotations.yaml", "score: 4\n", "score: true\n", "not a number"),
        ("annotations.yaml", "    reason: |\n", "    reasn: |\n", "unknown key"),
        (
            "annotations.yaml",
            "sample_id: code_missing_error_handling",
            "sample_id: code_sql_injection",
            "annotated twice",
        ),
        ("annotations.yaml", "annotations:\n", "annotations: [\n", "invalid YAML"),
        ("metadata.yaml", "annotator: claude-opus-4-7-1m", "annotator: ''", "annotator"),
        ("metadata.yaml", "scale: { min: 1, max: 5 }", "scale: { min: 5, max: 1 }", "must be below max"),
    ],
)
def test_bad_gold_input_is_one_line(omk_gold: Path, file: str, old: str, new: str, match: str) -> None:
    _replace(omk_gold / file, old, new)
    with pytest.raises(InputError, match=match) as exc:
        load_gold(omk_gold)
    assert str(exc.value).startswith(str(omk_gold / file)) and "\n" not in str(exc.value)


def test_missing_directory_and_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a gold directory"):
        load_gold(tmp_path / "nope")
    with pytest.raises(InputError, match=r"metadata\.yaml: missing"):
        load_gold(tmp_path)


def test_init_writes_a_template_that_validates_once_filled(tmp_path: Path) -> None:
    target = tmp_path / "g"
    written = init_gold(["a", "b: tricky", "c"], target, annotator="alice", scale=GoldScale(min=0, max=10))
    assert written == [target / "metadata.yaml", target / "annotations.yaml"]
    with pytest.raises(InputError, match="'a': score is empty; fill in a score from 0 to 10"):
        load_gold(target)
    text = (target / "annotations.yaml").read_text(encoding="utf-8").replace("score: null", "score: 7")
    (target / "annotations.yaml").write_text(text, encoding="utf-8")
    gold = load_gold(target)
    assert gold.scores() == {"a": 7, "b: tricky": 7, "c": 7}
    assert gold.metadata.annotator == "alice" and gold.metadata.scale.max == 10
    with pytest.raises(InputError, match="already exists; pass --force"):
        init_gold(["a"], target, annotator="alice")
    init_gold(["z"], target, annotator="bob", force=True)
    assert "z" in (target / "annotations.yaml").read_text(encoding="utf-8")
    with pytest.raises(InputError, match="no samples"):
        init_gold([], tmp_path / "empty", annotator="alice")
