"""Coverage counts every way an agent reads a file (issue 28 point 5): the Read tool, a content
Grep, and Bash readers with literal, ``$PWD``, ``~`` / ``$HOME`` and absolute paths."""

from __future__ import annotations

import pytest

from knowmeter.analysis import accessed_files
from knowmeter.traces import load_trace

WS = "/home/alice/proj"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat docs/a.md", ["docs/a.md"]),
        ('cat "$PWD/docs/a.md"', ["docs/a.md"]),
        ("cat ${PWD}/docs/a.md", ["docs/a.md"]),
        ("head -n 20 ~/proj/docs/a.md", ["docs/a.md"]),
        ("tail -5 $HOME/proj/docs/a.md", ["docs/a.md"]),
        (f"sed -n '1,40p' {WS}/docs/a.md", ["docs/a.md"]),
        ("awk 1 docs/a.md", ["docs/a.md"]),
        ("awk -F: '{print $1}' docs/a.md docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("grep -n refund docs/a.md", ["docs/a.md"]),
        ("grep -e refund -e window docs/a.md", ["docs/a.md"]),
        ("rg refund docs/a.md", ["docs/a.md"]),
        ("less docs/a.md", ["docs/a.md"]),
        ("nl -ba docs/a.md | head", ["docs/a.md"]),
        ("cd docs && cat $PWD/a.md", ["docs/a.md"]),
        ("python3 -c \"print(open('docs/a.md').read())\"", ["docs/a.md"]),
        ("python -c 'from pathlib import Path; print(Path(\"docs/a.md\").read_text())'", ["docs/a.md"]),
        ("python3 -c \"open('out.txt', 'w').write('x')\"", []),
        ("grep -l refund docs/a.md", []),
        ("grep -c refund docs/a.md", []),
        ("cat docs/a.md > /tmp/copy.md", []),
        ("grep refund", []),
    ],
)
def test_every_bash_read_of_a_file_is_an_access(tb, command, expected):
    trace = tb(meta={"cwd": WS}).bash(command, "some content").build()
    assert sorted(accessed_files(trace, WS)) == expected


def test_read_and_content_grep_tools_are_accesses_a_names_only_grep_and_glob_are_not(tb):
    trace = (
        tb(meta={"cwd": WS})
        .read_ok(f"{WS}/docs/a.md")
        .tool("Grep", {"pattern": "refund", "path": f"{WS}/docs/b.md", "output_mode": "content"}, "3:refund window")
        .tool("Grep", {"pattern": "refund", "path": f"{WS}/docs/c.md"}, "docs/c.md")
        .tool("Glob", {"pattern": "docs/*.md"}, f"{WS}/docs/d.md")
        .build()
    )
    assert accessed_files(trace, WS) == {"docs/a.md": 1, "docs/b.md": 1}


def test_home_is_unknown_outside_a_home_folder(tb):
    trace = tb(meta={"cwd": "/srv/ws"}).bash("cat ~/notes.md", "x").build()
    assert accessed_files(trace, "/srv/ws") == {"~/notes.md": 1}


def test_bash_reads_in_real_corpus_logs(shared_dir):
    corpus = shared_dir / "reference/traces-corpus/tielec"
    # 475_06 turn 1: `cd …/pulumi-stack-action && cat src/__init__.py`; turn 5: `grep -n "…" …/Jenkinsfile`
    # (absolute path inside the workspace)
    trace = load_trace(corpus / "issue-475_06_testing_execute__5f64bc09.txt")
    assert accessed_files(trace, trace.meta["cwd"]) == {
        "jenkins/jobs/pipeline/infrastructure/pulumi-stack-action/src/__init__.py": 1,
        "jenkins/jobs/pipeline/infrastructure/pulumi-stack-action/Jenkinsfile": 1,
    }
    # 455_06 turn 2: `grep -A 32 "// APIキー設定" jenkins/jobs/dsl/ai-workflow/<job>.groovy | head -40` for
    # five job files; the `for file in …; do grep … "$file"` loops of turns 8 and 10 name no file
    trace = load_trace(corpus / "issue-455_06_testing_execute__8a803f09.txt")
    access = accessed_files(trace, trace.meta["cwd"])
    assert len(access) == 5 and all(k.startswith("jenkins/jobs/dsl/ai-workflow/ai_workflow_") for k in access)
    assert not any("$" in k for k in access)


def test_an_empty_grep_of_a_file_and_a_recursive_grep_are_not_reads(shared_dir):
    # 461_07 turn 11: `grep -n "pulumi-stack-action" …/README.md` printed nothing; turn 12:
    # `grep -rn … /…/*.md` (a glob: which files is unknown)
    trace = load_trace(shared_dir / "reference/traces-corpus/tielec/issue-461_07_documentation_execute__c6fa7991.txt")
    assert not any("*" in k for k in accessed_files(trace, trace.meta["cwd"]))


def test_a_recursive_grep_reads_the_files_whose_lines_it_showed(shared_dir):
    # 415_04 turn 2: `grep -r "scripts/ai-workflow" --exclude… . || echo …` printed matching lines of
    # six files (each line prefixed ./path:); `.` itself is no file
    trace = load_trace(shared_dir / "reference/traces-corpus/tielec/issue-415_04_implementation_execute__e54d4c83.txt")
    access = accessed_files(trace, trace.meta["cwd"])
    assert {
        ".gitignore",
        "run_tests_issue_322.sh",
        "jenkins/jobs/pipeline/_seed/job-creator/folder-config.yaml",
    } <= set(access)
    assert "." not in access and len(access) == 7  # the six grep hits and README.md (Read)


def test_a_content_grep_of_a_folder_reads_the_files_in_its_output(shared_dir):
    # 411_00: Grep (output_mode content) in jenkins/ showed lines of README.md, folder-config.yaml and
    # the Jenkinsfile: those are read; the folder jenkins/ is not a file
    trace = load_trace(shared_dir / "reference/traces-corpus/tielec/issue-411_00_planning_execute__73a925de.txt")
    access = accessed_files(trace, trace.meta["cwd"])
    assert "jenkins/README.md" in access and "jenkins/jobs/pipeline/_seed/job-creator/folder-config.yaml" in access
    assert "jenkins" not in access
