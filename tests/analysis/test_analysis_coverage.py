"""Knowledge coverage: which files are knowledge, what counts as an access, exact-path matching,
and the watermark on the coverage figure."""

from __future__ import annotations

import shutil

import pytest

from knowmeter.analysis import Coverage, accessed_files, coverage, knowledge_files, render_coverage
from knowmeter.samples import WATERMARK_WARNING
from knowmeter.traces import ErrorKind, ToolStatus


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    files = {
        "skills/refund/SKILL.md": "# Refunds\nSee knowledge/refunds.md and [policy](../../knowledge/policy.md).\n"
        "Templates live in templates/. Ignore https://example.com/x.md and missing.md.\n",
        "skills/refund/reference.md": "details",
        "knowledge/refunds.md": "# Refund windows\n30 days.",
        "knowledge/policy.md": "# Policy",
        "knowledge/extra.md": "# Extra",
        "templates/mail.txt": "hello",
        ".claude/knowledge/glossary.md": "# Glossary",
        "CLAUDE.md": "# Project rules",
        "a/notes.md": "# Notes A",
        "b/notes.md": "# Notes B",
        "src/app.py": "print()",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_knowledge_files_of_a_directory_skill(project):
    files = knowledge_files(project, artifact=project / "skills/refund/SKILL.md", knowledge_dirs=["a"])
    by_path = {f.path: f.origin for f in files}
    assert by_path == {
        "skills/refund/SKILL.md": "artifact",
        "skills/refund/reference.md": "artifact",
        "knowledge/refunds.md": "referenced",
        "knowledge/policy.md": "referenced",
        "templates/mail.txt": "referenced",
        "a/notes.md": "knowledge_dir",
        ".claude/knowledge/glossary.md": "claude_knowledge",
        "CLAUDE.md": "memory",
    }
    assert [f.path for f in files] == sorted(by_path)


def test_single_file_artifact_and_installed_skill_alias(project):
    files = knowledge_files(project, artifact=project / "knowledge/extra.md")
    assert {f.path for f in files} == {"knowledge/extra.md", ".claude/knowledge/glossary.md", "CLAUDE.md"}
    skill = knowledge_files(project, artifact=project / "skills/refund", skill_name="refund")
    ref = next(f for f in skill if f.path == "skills/refund/reference.md")
    assert ref.aliases == (".claude/skills/refund/reference.md",)


def test_a_file_found_twice_is_one_knowledge_file(project):
    files = knowledge_files(project, artifact=project / "skills/refund/SKILL.md", knowledge_dirs=["knowledge"])
    assert [f.path for f in files].count("knowledge/refunds.md") == 1
    assert next(f for f in files if f.path == "knowledge/refunds.md").origin == "referenced"


def test_exact_path_matching_never_matches_a_file_of_the_same_name_elsewhere(project, tb, watermark):
    files = knowledge_files(project, knowledge_dirs=["a"])
    trace = tb(meta={"cwd": str(project)}).read_ok(str(project / "b/notes.md")).build()
    access = accessed_files(trace, project)
    assert access == {"b/notes.md": 1}
    cov = coverage(files, [access], watermark)
    assert "a/notes.md" in cov.uncovered
    trace2 = tb(meta={"cwd": str(project)}).read_ok("a/notes.md").build()
    cov2 = coverage(files, [accessed_files(trace2, project)], watermark)
    assert "a/notes.md" not in cov2.uncovered


def test_reads_in_a_temporary_copy_match_the_original_layout(project, tmp_path, tb, watermark):
    files = knowledge_files(project, artifact=project / "skills/refund/SKILL.md")
    copy = tmp_path / "task-7f3a"
    shutil.copytree(project, copy)
    trace = (
        tb(meta={"cwd": str(copy)})
        .read_ok(str(copy / "knowledge/refunds.md"))
        .read_ok("knowledge/refunds.md", turn=2)
        .bash("cat knowledge/policy.md | head -5", "# Policy")
        .bash("sed -n '1,3p' ./templates/mail.txt", "hello")
        .bash("grep -rn Notes skills/refund/reference.md", "details")
        .read_missing(str(copy / "knowledge/gone.md"))
        .tool(
            "Read",
            {"file_path": str(copy / "CLAUDE.md")},
            "denied",
            status=ToolStatus.FAILURE,
            kind=ErrorKind.PERMISSION_DENIED,
        )
        .build()
    )
    access = accessed_files(trace, copy)
    # grep PATTERN FILE showed the agent that file's matching lines: an access (issue 28)
    assert access == {
        "knowledge/refunds.md": 2,
        "knowledge/policy.md": 1,
        "templates/mail.txt": 1,
        "skills/refund/reference.md": 1,
    }
    cov = coverage(files, [access, {"knowledge/refunds.md": 1}], watermark, variant="treatment")
    rows = {f.path: f for f in cov.files}
    assert (rows["knowledge/refunds.md"].accesses, rows["knowledge/refunds.md"].tasks) == (3, 2)
    assert set(cov.uncovered) == {"skills/refund/SKILL.md", ".claude/knowledge/glossary.md", "CLAUDE.md"}
    assert (cov.covered, cov.total) == (4, 7)
    assert cov.rate == pytest.approx(4 / 7)


def test_injected_files_count_as_accessed(project, tb, watermark):
    files = knowledge_files(project, artifact=project / "skills/refund/SKILL.md")
    cov = coverage(files, [{}, {}], watermark, injected=["skills/refund/SKILL.md", "CLAUDE.md"])
    rows = {f.path: f for f in cov.files}
    assert rows["CLAUDE.md"].accessed and rows["CLAUDE.md"].injected and rows["CLAUDE.md"].tasks == 2
    assert "skills/refund/SKILL.md" not in cov.uncovered


def test_injection_seen_in_the_trace_counts(project, tb):
    trace = (
        tb()
        .say(f"# AGENTS.md instructions for {project}\n\n<INSTRUCTIONS>x</INSTRUCTIONS>", role="user", injected=True)
        .say(f"<system-reminder>Contents of {project}/CLAUDE.md (project instructions):", role="user", injected=True)
        .build()
    )
    assert accessed_files(trace, project) == {"AGENTS.md": 1, "CLAUDE.md": 1}


def test_installed_skill_copy_is_matched_by_alias(project, tb, watermark):
    files = knowledge_files(project, artifact=project / "skills/refund", skill_name="refund")
    trace = (
        tb(meta={"cwd": str(project)})
        .read_ok(".claude/skills/refund/reference.md")
        .tool("Skill", {"skill": "refund"}, "Launching skill: refund")
        .build()
    )
    cov = coverage(files, [accessed_files(trace, project)], watermark)
    assert "skills/refund/reference.md" not in cov.uncovered
    assert "skills/refund/SKILL.md" not in cov.uncovered


def test_coverage_carries_the_watermark(project, watermark):
    cov = coverage(knowledge_files(project), [], watermark, variant="control")
    d = cov.to_dict()
    assert d["watermark"]["warning"] == WATERMARK_WARNING and d["watermark"]["short"] == "1a2b3c4d"
    assert Coverage.from_dict(d) == cov
    with pytest.raises(ValueError, match=r"missing field.*watermark"):
        Coverage.from_dict({k: v for k, v in d.items() if k != "watermark"})
    text = render_coverage(cov)
    assert "coverage 0.0% (0/2 knowledge files)" in text
    assert "sample set eval-samples.yaml · 12 samples · 1a2b3c4d" in text and WATERMARK_WARNING in text


def test_no_knowledge_files_means_no_rate(tmp_path, watermark):
    cov = coverage(knowledge_files(tmp_path), [], watermark)
    assert cov.rate is None and cov.headline() == "coverage n/a (no knowledge files)"


def test_artifact_outside_the_working_dir_and_what_is_in_context(project, tb, watermark):
    # the demo layout: the agent works in knowledge's parent, the skill lives beside it
    root = project / "knowledge"
    (root / "CLAUDE.md").write_text("# rules", encoding="utf-8")
    files = knowledge_files(
        root, artifact=project / "skills/refund/SKILL.md", artifact_in_context=True, memory_in_context=True
    )
    rows = {f.path: f for f in files}
    main = rows["../skills/refund/SKILL.md"]
    assert main.origin == "artifact" and main.injected
    assert str(project / "skills/refund/SKILL.md") in main.aliases
    assert not rows["../skills/refund/reference.md"].injected
    # "knowledge/refunds.md" resolves neither from the skill's folder nor from this root; the link
    # ../../knowledge/policy.md does
    assert rows["CLAUDE.md"].injected and rows["policy.md"].origin == "referenced" and "refunds.md" not in rows
    trace = tb(meta={"cwd": str(root)}).read_ok(str(project / "skills/refund/reference.md")).build()
    cov = coverage(files, [accessed_files(trace, root)], watermark)
    assert set(cov.uncovered) == {"policy.md"}
