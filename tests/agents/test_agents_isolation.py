"""Per-task isolation: private workspace copies and HOME, a minimal environment, skills only where
installed, and process groups that die on timeout or cancellation."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from knowmeter.executors import ExecRequest, SkillInstall
from knowmeter.executors._isolation import ProcessOutcome, install_skill, minimal_env, run_process, task_sandbox


def _request(workspace: Path | None, task_id: str = "s1::baseline::r0", **kw: Any) -> ExecRequest:
    return ExecRequest(task_id=task_id, sample_id="s1", prompt="p", system=None, workspace=workspace, **kw)


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_sandbox_copies_the_workspace_without_agent_skills_and_removes_itself(workspace: Path) -> None:
    for d in (".claude/skills/leak", ".codex/skills/leak", ".agents/skills/leak"):
        (workspace / d).mkdir(parents=True)
        (workspace / d / "SKILL.md").write_text("leak")
    (workspace / ".claude" / "settings.json").write_text("{}")
    (workspace / ".git").mkdir()
    before = _tree(workspace)

    async def main() -> Path:
        async with task_sandbox(_request(workspace)) as sb:
            assert sb.workspace != workspace and sb.workspace.is_relative_to(sb.root)
            copied = _tree(sb.workspace)
            assert {"fruits.txt", "notes.md", ".claude/settings.json"} <= copied
            assert not any("skills" in p for p in copied), copied  # no agent skill folder survives
            assert ".git" not in copied
            (sb.workspace / "written.txt").write_text("agent output")
            return sb.root

    root = anyio.run(main)
    assert not root.exists()
    assert _tree(workspace) == before  # the variant's folder is never modified


def test_sandbox_leaves_out_pipes_sockets_and_devices_of_the_workspace(workspace: Path) -> None:
    """A knowledge base holding a named pipe or a socket (an app's, git fsmonitor's) failed every
    task of an agent CLI (shutil cannot copy them; a pipe could block the copy): they are left
    out, and a symlink — a dangling one too — is copied as a link."""
    os.mkfifo(workspace / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(workspace / "app.sock"))
        (workspace / "dangling").symlink_to(workspace / "nowhere")

        async def main() -> set[str]:
            async with task_sandbox(_request(workspace)) as sb:
                assert os.readlink(sb.workspace / "dangling") == str(workspace / "nowhere")
                return _tree(sb.workspace)

        copied = anyio.run(main)
    assert {"fruits.txt", "notes.md", "dangling"} <= copied and not {"pipe", "app.sock"} & copied


def test_workspace_skills_are_kept_on_request(workspace: Path) -> None:
    (workspace / ".claude" / "skills" / "own").mkdir(parents=True)

    async def main() -> set[str]:
        async with task_sandbox(_request(workspace), keep_workspace_skills=True) as sb:
            return _tree(sb.workspace)

    assert ".claude/skills/own" in anyio.run(main)


def test_sandbox_home_and_env_are_private(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWMETER_TEST_SECRET", "s3cret")
    monkeypatch.setenv("ANTHROPIC_TEST_VAR", "passed")

    async def main() -> tuple[Path, dict[str, str]]:
        req = _request(workspace, env={"TASK_VAR": "from-request"})
        async with task_sandbox(req, pass_env=["ANTHROPIC_*"], extra_env={"FIXED": "1"}) as sb:
            return sb.root, sb.env

    root, env = anyio.run(main)
    assert env["HOME"] == str(root / "home") != os.environ.get("HOME")
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"):
        assert env[var].startswith(str(root)), var
    assert env["TERM"] == "dumb"
    assert env["ANTHROPIC_TEST_VAR"] == "passed" and env["FIXED"] == "1" and env["TASK_VAR"] == "from-request"
    assert "KNOWMETER_TEST_SECRET" not in env
    assert env["KNOWMETER_SANDBOX"] == str(root)
    assert set(env) <= {
        "PATH",
        "HOME",
        "TERM",
        "LANG",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "KNOWMETER_SANDBOX",
        "ANTHROPIC_TEST_VAR",
        "FIXED",
        "TASK_VAR",
    }


def test_minimal_env_does_not_let_passthrough_override_isolation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", "/real/codex")
    env = minimal_env(tmp_path, tmp_path, pass_env=["CODEX_*", "*HOME*"])
    assert env["CODEX_HOME"] == str(tmp_path / ".codex") and env["HOME"] == str(tmp_path)


def test_concurrent_tasks_get_distinct_workspaces(workspace: Path) -> None:
    roots: list[Path] = []

    async def one(i: int) -> None:
        async with task_sandbox(_request(workspace, task_id="s1::same::r0")) as sb:
            (sb.workspace / "fruits.txt").write_text(f"task {i}")
            await anyio.sleep(0.05)
            assert (sb.workspace / "fruits.txt").read_text() == f"task {i}"
            roots.append(sb.root)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(one, i)

    anyio.run(main)
    assert len(set(roots)) == 6


def test_no_workspace_gives_an_empty_one() -> None:
    async def main() -> set[str]:
        async with task_sandbox(_request(None)) as sb:
            return _tree(sb.workspace)

    assert anyio.run(main) == set()


def test_install_skill_copies_the_whole_folder(skill_dir: Path, tmp_path: Path) -> None:
    skill = SkillInstall("fruit finder!", skill_dir, "edited text")
    dest = install_skill(tmp_path / "work" / ".claude" / "skills", skill)
    assert dest.name == "fruit-finder"
    assert (dest / "references" / "fruits.md").read_text() == "banana, kiwi, apple\n"
    assert (dest / "SKILL.md").read_text() == "edited text"  # the request's text is what is installed
    with pytest.raises(ValueError, match="own source"):
        install_skill(skill_dir.parent, skill)
    assert (skill_dir / "SKILL.md").is_file()


def test_skill_folder_is_named_after_the_frontmatter_name(tmp_path: Path) -> None:
    named = SkillInstall("treatment", None, "---\nname: 'release-notes'\ndescription: d\n---\nbody")
    assert install_skill(tmp_path, named).name == "release-notes"
    unnamed = SkillInstall("v2 draft", None, "# no frontmatter\nname: not-this\n")
    assert install_skill(tmp_path, unnamed).name == "v2-draft"


def test_install_skill_adds_frontmatter_only_when_asked_and_missing(tmp_path: Path) -> None:
    plain = SkillInstall("notes", None, "# Release notes\n\nAlways cite the ticket.\n")
    text = (install_skill(tmp_path / "a", plain, ensure_frontmatter=True) / "SKILL.md").read_text()
    assert text.startswith('---\nname: notes\ndescription: "Release notes"\n---\n') and text.endswith(plain.text)
    assert (install_skill(tmp_path / "b", plain) / "SKILL.md").read_text() == plain.text
    fm = SkillInstall("x", None, "---\nname: x\ndescription: y\n---\nbody")
    assert (install_skill(tmp_path / "c", fm, ensure_frontmatter=True) / "SKILL.md").read_text() == fm.text
    # saved on Windows (byte-order mark, CRLF): it has its frontmatter — not given a second one in front
    windows = SkillInstall("x", None, "\ufeff---\r\nname: release-notes\r\ndescription: y\r\n---\r\nbody\r\n")
    dest = install_skill(tmp_path / "d", windows, ensure_frontmatter=True)
    assert dest.name == "release-notes" and (dest / "SKILL.md").read_bytes() == windows.text.encode()


_SPAWN_CHILD = "import subprocess, sys, time; subprocess.Popen(['sleep', sys.argv[1]]); time.sleep(60)"


def _sleepers(tag: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if p.info["cmdline"] and p.info["cmdline"][:2] == ["sleep", tag]:
            found.append(p)
    return found


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    tag = f"{os.getpid() % 1000 + 1000}.{time.time_ns() % 10_000:04d}"
    env = minimal_env(tmp_path, tmp_path)

    async def main() -> ProcessOutcome:
        return await run_process([sys.executable, "-c", _SPAWN_CHILD, tag], cwd=tmp_path, env=env, timeout_s=1.0)

    started = time.monotonic()
    outcome = anyio.run(main)
    assert outcome.timed_out and outcome.returncode is not None and outcome.returncode < 0
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while _sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sleepers(tag), "the grandchild survived the timeout"


@pytest.mark.slow
def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    tag = f"{os.getpid() % 1000 + 2000}.{time.time_ns() % 10_000:04d}"
    env = minimal_env(tmp_path, tmp_path)

    async def main() -> None:
        with anyio.move_on_after(1.0):
            await run_process([sys.executable, "-c", _SPAWN_CHILD, tag], cwd=tmp_path, env=env, timeout_s=None)

    anyio.run(main)
    deadline = time.monotonic() + 5
    while _sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sleepers(tag)


_SPAWN_DETACHED = (
    "import subprocess, sys; subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the sandbox sweep reads /proc (Linux)")
def test_leaving_the_sandbox_kills_processes_that_left_the_group(workspace: Path) -> None:
    tag = f"{os.getpid() % 1000 + 3000}.{time.time_ns() % 10_000:04d}"

    async def main() -> ProcessOutcome:
        async with task_sandbox(_request(workspace)) as sb:
            outcome = await run_process(
                [sys.executable, "-c", _SPAWN_DETACHED, tag], cwd=sb.workspace, env=sb.env, timeout_s=30
            )
            assert _sleepers(tag), "the detached child should outlive its parent and the group kill"
            return outcome

    assert anyio.run(main).returncode == 0
    deadline = time.monotonic() + 5
    while _sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sleepers(tag)


def test_run_process_feeds_stdin_and_collects_output(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("- a prompt that starts with a dash\n" + "x" * 300_000)
    code = "import sys; data = sys.stdin.read(); print(len(data)); print(data[:10], file=sys.stderr); sys.exit(3)"

    async def main() -> ProcessOutcome:
        return await run_process(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=minimal_env(tmp_path, tmp_path),
            timeout_s=30,
            stdin_path=prompt,
        )

    out = anyio.run(main)
    assert out.stdout.decode().strip() == str(len(prompt.read_text()))
    assert out.returncode == 3 and not out.timed_out
    assert out.stderr_tail() == "- a prompt"


def test_stdin_defaults_to_dev_null(tmp_path: Path) -> None:
    async def main() -> ProcessOutcome:
        return await run_process(
            [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"],
            cwd=tmp_path,
            env=minimal_env(tmp_path, tmp_path),
            timeout_s=30,
        )

    assert anyio.run(main).stdout.decode().strip() == "''"


def test_run_process_keeps_the_end_of_a_flood_of_stderr(tmp_path: Path) -> None:
    """An agent CLI that prints 50 MiB to stderr before failing: the outcome holds the last 64 KiB
    (its tail is all that is ever shown), not 50 MiB per task in memory."""
    code = "import sys; sys.stderr.write('e' * (50 << 20) + '\\nthe real reason\\n'); sys.exit(3)"

    async def main() -> ProcessOutcome:
        return await run_process(
            [sys.executable, "-c", code], cwd=tmp_path, env=minimal_env(tmp_path, tmp_path), timeout_s=60
        )

    out = anyio.run(main)
    assert out.returncode == 3 and len(out.stderr) == 1 << 16
    assert out.stderr_tail().endswith("| the real reason")
