"""Skill Graph reference files (``shared/reference/skill-graph``) and the v6 / v8 / marketplace
shapes built from the real type-safety SKILL.md the way ``FORMATS.md`` §1.2–1.5 describes them
(the reference folder holds v4 files only)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture(scope="session")
def ref(shared_dir: Path) -> Path:
    return shared_dir / "reference" / "skill-graph"


@pytest.fixture(scope="session")
def type_safety_parts(ref: Path) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of the real v4 type-safety SKILL.md."""
    text = (ref / "skills" / "type-safety" / "SKILL.md").read_text(encoding="utf-8")
    _, fm, body = text.split("---\n", 2)
    return yaml.safe_load(fm), body


def write_skill(folder: Path, frontmatter: dict[str, Any], body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    dumped = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=10_000)
    path.write_text(f"---\n{dumped}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def reshaped(tmp_path: Path, ref: Path, type_safety_parts: tuple[dict[str, Any], str]) -> Callable[[str], Path]:
    """Write type-safety as a v6, v8, marketplace-v0.5.6 or marketplace-HEAD skill; return its path."""
    fm, body = type_safety_parts
    concept = fm["concept"]
    base = {"name": "type-safety", "description": fm["description"]}
    flat = {k: concept[k] for k in ("mental_model", "purpose", "boundary", "analogy", "misconception")}

    def make(shape: str) -> Path:
        folder = tmp_path / "skills" / "type-safety"
        if shape == "v6":
            data = {
                "schema_version": 6,
                **base,
                "type": "capability",
                "category": "quality",
                "comprehension_state": "present",
                **flat,
            }
        elif shape == "v8":
            v8 = {("concept_boundary" if k == "boundary" else k): v for k, v in flat.items()}
            data = {
                **base,
                "subject": "quality-assurance",
                "public": True,
                "scope": "types as a quality property",
                **v8,
            }
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(ref / "comprehension-json" / "type-safety" / "audit-state.json", folder / "audit-state.json")
        elif shape == "market-v056":
            packed_concept = {**concept, "mental_model": "|", "purpose": "|"}
            packed = {"comprehension_state": "present", "mental_model": "|", "concept": json.dumps(packed_concept)}
            data = {**base, "metadata": {"metadata": json.dumps(packed)}}
        elif shape in ("market-head", "market-head-concept"):
            # the v8 exporter's layout (FORMATS.md §1.5): the protocol as a metadata map of strings,
            # multi-line understanding fields as the literal '|', the prose only in the body
            data = {
                **base,
                "license": "MIT",
                "metadata": {
                    "subject": "quality-assurance",
                    "public": "true",
                    "scope": "types as a quality property",
                    "mental_model": "|",
                    "purpose": concept["purpose"],
                    "concept_boundary": "|",
                    "analogy": "passport check",
                    "misconception": "|",
                    "skill_graph_canonical_skill": "skills/quality-assurance/type-safety/SKILL.md",
                },
            }
            if shape == "market-head-concept":  # the body as that exporter writes it
                prose = "\n\n".join(concept[k].strip() for k in ("mental_model", "boundary", "misconception"))
                text = body.replace("## Coverage", f"## Concept of the skill\n\n{prose}\n\n## Coverage", 1)
                return write_skill(folder, data, text.replace("## Philosophy\n", "## Philosophy of the skill\n", 1))
        else:
            raise AssertionError(shape)
        return write_skill(folder, data, body)

    return make
