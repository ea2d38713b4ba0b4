"""Reading a knowledge base's structure: files, headings, principles, skill descriptions, the
knowledge-base hash; real Skill Graph skills and the demo's knowledge base."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.probe import read_structure

DEMO_KB = Path(__file__).resolve().parents[2] / "src/knowmeter/demo/template/workspace/knowledge"


def _kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "guides").mkdir(parents=True)
    (kb / ".hidden").mkdir()
    (kb / ".hidden" / "secret.md").write_text("# Not part of it\n", encoding="utf-8")
    (kb / "CLAUDE.md").write_text(
        "# Project rules\n\n- Always cite the policy file you used.\n- Never guess a price.\n"
        "```\n- not a rule inside a fence\n# not a heading\n```\n",
        encoding="utf-8",
    )
    (kb / "guides" / "revenue.md").write_text(
        "# Revenue\n\nintro\n## The `revenue_schema` table\ntext\n### Late fees\n#### too deep\n", encoding="utf-8"
    )
    (kb / "guides" / "notes.txt").write_text("plain notes without headings\n", encoding="utf-8")
    (kb / "guides" / "image.png").write_bytes(b"\x89PNG")
    return kb


def test_elements_of_each_kind(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    s = read_structure([kb], base=tmp_path)
    assert [f.key for f in s.files] == ["kb/CLAUDE.md", "kb/guides/notes.txt", "kb/guides/revenue.md"]
    assert [f.agent_path for f in s.files] == ["kb/CLAUDE.md", "kb/guides/notes.txt", "kb/guides/revenue.md"]
    got = [(e.kind, e.file, e.text, e.level) for e in s.elements]
    assert got == [
        ("file", "kb/CLAUDE.md", "CLAUDE.md", None),
        ("heading", "kb/CLAUDE.md", "Project rules", 1),
        ("principle", "kb/CLAUDE.md", "Always cite the policy file you used.", None),
        ("principle", "kb/CLAUDE.md", "Never guess a price.", None),
        ("file", "kb/guides/notes.txt", "notes.txt", None),
        ("file", "kb/guides/revenue.md", "revenue.md", None),
        ("heading", "kb/guides/revenue.md", "Revenue", 1),
        ("heading", "kb/guides/revenue.md", "The `revenue_schema` table", 2),
        ("heading", "kb/guides/revenue.md", "Late fees", 3),
    ]
    assert [e.id for e in s.elements] == [f"E{i}" for i in range(1, 10)]
    assert s.roots == ("kb",)


def test_kb_hash_follows_content_not_location(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    first = read_structure([kb], base=tmp_path).sha256
    assert read_structure([kb], base=tmp_path).sha256 == first
    (kb / "guides" / "notes.txt").write_text("plain notes, edited\n", encoding="utf-8")
    assert read_structure([kb], base=tmp_path).sha256 != first
    # the same files under the same keys elsewhere hash the same
    (kb / "guides" / "notes.txt").write_text("plain notes without headings\n", encoding="utf-8")
    other = tmp_path / "copy"
    other.mkdir()
    shutil.copytree(kb, other / "kb")
    assert read_structure([other / "kb"], base=other).sha256 == first


def test_agent_path_is_relative_to_the_kb_folder_parent(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    s = read_structure([kb / "guides"], base=tmp_path)
    assert [f.agent_path for f in s.files] == ["guides/notes.txt", "guides/revenue.md"]
    here = read_structure([kb], base=kb)
    assert here.files[0].key == "CLAUDE.md" and here.files[0].agent_path == "CLAUDE.md"


def test_real_skill_graph_skills(shared_dir: Path) -> None:
    """Frontmatter YAML comments are not headings; each SKILL.md's description is a skill element."""
    root = shared_dir / "reference/skill-graph"
    s = read_structure([root / "skills"], base=root)
    kinds = Counter(e.kind for e in s.elements)
    skills = [e for e in s.elements if e.kind == "skill"]
    assert kinds["file"] == len(s.files) and kinds["heading"] > 20
    assert skills and all(": " in e.text and e.file.endswith("SKILL.md") for e in skills)
    assert not any(
        "yaml-language-server" in e.text or "schema" in e.text.lower()[:20] for e in s.elements if e.kind == "heading"
    )


def test_demo_knowledge_base() -> None:
    s = read_structure([DEMO_KB], base=DEMO_KB.parent)
    assert [e.text for e in s.elements if e.kind == "heading"] == [
        "Billing",
        "Data export and deletion",
        "Incidents and service credits",
        "Plans",
        "Refunds",
        "Security",
    ]
    assert {f.agent_path for f in s.files} == {f"knowledge/{f.name}" for f in DEMO_KB.iterdir()}


def test_bad_knowledge_base_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing: knowledge base folder not found; pass --kb DIR"):
        read_structure([tmp_path / "missing"], base=tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "a.png").write_bytes(b"x")
    with pytest.raises(InputError, match=r"no knowledge files \(\.md, \.markdown, \.txt, \.rst\) found"):
        read_structure([tmp_path / "empty"], base=tmp_path)
    (tmp_path / "empty" / "bad.md").write_bytes(b"\xff\xfe# x")
    with pytest.raises(InputError, match=r"bad\.md: cannot read it as UTF-8 text"):
        read_structure([tmp_path / "empty"], base=tmp_path)
