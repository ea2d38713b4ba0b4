"""Per-task isolation for agents that run as local processes.

Each task gets its own temporary root holding

- ``work/`` — a copy of the variant's working directory (never the original). Agent skill
  folders found in it (``.claude/skills``, ``.codex/skills``, ``.agents/skills``) are left out
  unless asked for, so the only skill an arm can see is the one knowmeter installs;
- ``home/`` — HOME, with CODEX_HOME, CLAUDE_CONFIG_DIR and the XDG dirs inside it, so user-level
  skills, settings, plugins, MCP servers, credentials files and memory cannot leak in;
- ``tmp/`` — TMPDIR.

The process gets an ``env -i``-style environment: PATH, HOME, TERM=dumb, LANG, the private
config dirs, the provider variables the executor names, and nothing else. ``run_process`` runs
the agent in its own process group and kills the whole group on timeout or cancellation.

Agents start tools in process groups (and sessions) of their own — Claude Code's Bash tool does —
so a group kill cannot reach them. Every process of a task therefore carries
``KNOWMETER_SANDBOX=<task root>`` in its environment, and leaving the sandbox kills whatever
still carries it (Linux ``/proc``; elsewhere only the process group is killed).

With a ``Seal`` (``_seal``) the agent's command runs in a mount namespace of its own that holds
only the system's programs, the agent's install and its own sandbox: the other tasks'
sandboxes, the project, the variants' artifacts, the samples, the run store and the user's home
do not exist there, and nothing outside its sandbox can be written (``TaskSandbox.command``).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from knowmeter import defaults
from knowmeter.executors._netseal import endpoints_from, hosts_file, serve_endpoints
from knowmeter.executors._protocol import ExecRequest, SkillInstall
from knowmeter.executors._seal import Seal

__all__ = [
    "AGENT_SKILL_DIRS",
    "SANDBOX_ENV_VAR",
    "ProcessOutcome",
    "TaskSandbox",
    "install_skill",
    "install_skills",
    "kill_sandbox_processes",
    "minimal_env",
    "run_process",
    "skill_folder_name",
    "task_sandbox",
]

#: Folders (relative to a workspace) where agents discover project skills.
AGENT_SKILL_DIRS: tuple[str, ...] = (".claude/skills", ".codex/skills", ".agents/skills")
#: The variable that marks every process of a task (its value is the task's temporary root).
SANDBOX_ENV_VAR = "KNOWMETER_SANDBOX"

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_FRONTMATTER_NAME = re.compile(r"^name:[ \t]*(.+)$", re.M)
_KILL_GRACE_S = 3.0
_PIPE_DRAIN_S = 2.0


@dataclass(slots=True)
class TaskSandbox:
    """The private folders and environment of one task."""

    root: Path
    workspace: Path
    home: Path
    env: dict[str, str]
    #: how the agent is sealed from every other task; None when the user chose to run unsealed
    seal: Seal | None = None

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` as it must be started: inside the seal (starting in the workspace), if any."""
        return self.seal.argv(argv, cwd=self.workspace) if self.seal is not None else list(argv)

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def claude_config_dir(self) -> Path:
        return self.home / ".claude"


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def minimal_env(
    home: Path, tmp: Path, *, pass_env: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """An ``env -i``-style environment rooted at ``home``: PATH (this process's), HOME, TERM=dumb,
    LANG, TMPDIR, the XDG dirs, CODEX_HOME and CLAUDE_CONFIG_DIR.

    ``pass_env`` names variables (or glob patterns such as ``ANTHROPIC_*``) copied from this
    process's environment; ``extra`` is set last and wins.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "dumb",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TMPDIR": str(tmp),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }
    patterns = list(pass_env)
    if patterns:
        env.update({k: v for k, v in os.environ.items() if k not in env and _matches(k, patterns)})
    env.update(extra or {})
    return env


def _has_frontmatter(text: str) -> bool:
    """A SKILL.md that opens with a ``---`` line and closes it (after a byte-order mark, CRLF too)."""
    text = text.removeprefix("\ufeff")
    return text.startswith(("---\n", "---\r\n")) and "\n---" in text[3:]


def _with_frontmatter(name: str, text: str) -> str:
    """``text`` with a minimal ``name``/``description`` frontmatter when it has none (codex refuses
    a SKILL.md without one). The description is the first non-empty line."""
    if _has_frontmatter(text):
        return text
    first = next((ln.strip().lstrip("#").strip() for ln in text.splitlines() if ln.strip()), name)
    return f"---\nname: {name}\ndescription: {json.dumps(first[:300] or name)}\n---\n\n{text}"


def skill_folder_name(skill: SkillInstall) -> str:
    """The folder to install the skill in: the ``name`` of its SKILL.md frontmatter (agents expect
    folder and name to agree), else the install's name; anything but ``[A-Za-z0-9._-]`` → ``-``."""
    match = _FRONTMATTER_NAME.search(skill.text.split("\n---", 1)[0]) if _has_frontmatter(skill.text) else None
    name = match.group(1).strip().strip("\"'") if match else skill.name
    return _SAFE_NAME.sub("-", name).strip(".-") or "skill"


def install_skill(skills_dir: Path, skill: SkillInstall, *, ensure_frontmatter: bool = False) -> Path:
    """Install ``skill`` as ``skills_dir/<name>/SKILL.md`` (with the whole source folder, if any)
    and return that folder. ``skill.text`` is written as SKILL.md. Blocking: call in a thread."""
    dest = skills_dir / skill_folder_name(skill)
    if skill.source_dir is not None and dest.resolve() == skill.source_dir.resolve():
        raise ValueError(f"refusing to install skill {skill.name!r} over its own source folder {dest}")
    if dest.exists():
        shutil.rmtree(dest)
    if skill.source_dir is not None and skill.source_dir.is_dir():
        shutil.copytree(skill.source_dir, dest, symlinks=True)
    else:
        dest.mkdir(parents=True)
    text = _with_frontmatter(dest.name, skill.text) if ensure_frontmatter else skill.text
    (dest / "SKILL.md").write_text(text, encoding="utf-8")
    return dest


def install_skills(
    skills_dir: Path, skill: SkillInstall | None, extra: Sequence[SkillInstall], *, ensure_frontmatter: bool = False
) -> None:
    """Install the variant's ``skill`` (if any) and the ``extra`` skills beside it (an activation
    case's distractors). Two skills wanting one folder are refused: the agent would see only one.
    Blocking: call in a thread."""
    skills = [s for s in (skill, *extra) if s is not None]
    folders = [skill_folder_name(s) for s in skills]
    if len(set(folders)) != len(folders):
        clash = next(f for f in folders if folders.count(f) > 1)
        raise ValueError(f"two skills of one task install as {clash!r}; give them distinct frontmatter names")
    for s in skills:
        install_skill(skills_dir, s, ensure_frontmatter=ensure_frontmatter)


def _copy_workspace(src: Path | None, dest: Path, *, keep_skills: bool, ignore: Sequence[str]) -> None:
    if src is None:
        dest.mkdir()
        return
    if not src.is_dir():
        raise NotADirectoryError(f"workspace is not a directory: {src}")
    patterns = list(ignore)

    def _ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if (patterns and _matches(n, patterns)) or _special(os.path.join(folder, n))}
        if not keep_skills:
            rel = Path(folder).relative_to(src)
            skipped |= {n for n in names if (rel / n).as_posix().removeprefix("./") in AGENT_SKILL_DIRS}
        return skipped

    shutil.copytree(src, dest, symlinks=True, ignore=_ignore)


def _special(path: str) -> bool:
    """Whether ``path`` is a named pipe, a socket or a device (none can be copied, and none is
    knowledge: copying a pipe would wait for a writer); a symlink is copied as a link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


@asynccontextmanager
async def task_sandbox(
    request: ExecRequest,
    *,
    pass_env: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    keep_workspace_skills: bool = False,
    workspace_ignore: Sequence[str] = defaults.IGNORED_DIRS,
    tmp_root: Path | None = None,
    keep: bool = False,
    sealed: bool = False,
    expose: Sequence[Path] = (),
    api_urls: Mapping[str, str] | None = None,
) -> AsyncIterator[TaskSandbox]:
    """A private workspace copy, HOME and environment for one task; removed on exit unless
    ``keep``. Read whatever session files you need inside the ``async with`` block.

    The environment is ``minimal_env`` plus ``extra_env`` plus ``request.env`` (last wins).
    ``sealed`` adds a default-deny ``Seal``: the agent sees the system, the folders in ``expose``
    (its install, folders the user allows) read-only, and its own sandbox; ``request.protected``
    is blanked should it lie inside one of those. A sealed agent has a network of its own where only
    ``api_urls`` (what each is → URL) and the proxies its environment names are reachable."""
    # the folder's name says nothing of the task: the agent's working directory is in its prompt,
    # and a variant's name there ("baseline", "with-skill") would tell the model which arm it is in
    root = Path(await anyio.to_thread.run_sync(lambda: tempfile.mkdtemp(prefix="knowmeter-task-", dir=tmp_root)))
    try:
        home, tmp, work = root / "home", root / "tmp", root / "work"

        def _prepare() -> None:
            for folder in (home / ".codex", home / ".claude", home / ".config", tmp):
                folder.mkdir(parents=True, exist_ok=True)
            _copy_workspace(request.workspace, work, keep_skills=keep_workspace_skills, ignore=workspace_ignore)

        await anyio.to_thread.run_sync(_prepare)
        env = minimal_env(home, tmp, pass_env=pass_env, extra={**(extra_env or {}), **request.env})
        env[SANDBOX_ENV_VAR] = str(root)
        if not sealed:
            yield TaskSandbox(root=root, workspace=work, home=home, env=env)
            return
        endpoints = endpoints_from(api_urls or {}, env)
        hosts = hosts_file(endpoints)
        if hosts is not None:
            await anyio.Path(root / "hosts").write_text(hosts, encoding="utf-8")
        net_dir = Path(await anyio.to_thread.run_sync(lambda: tempfile.mkdtemp(prefix="knowmeter-net-", dir="/tmp")))
        try:
            seal = Seal(
                root,
                hide=tuple(request.protected),
                expose=tuple(expose),
                endpoints=endpoints,
                net_dir=net_dir,
                hosts=root / "hosts" if hosts is not None else None,
            )
            async with serve_endpoints(net_dir, endpoints):
                yield TaskSandbox(root=root, workspace=work, home=home, env=env, seal=seal)
        finally:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(net_dir, ignore_errors=True))
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(kill_sandbox_processes, root)
            if not keep:
                await anyio.to_thread.run_sync(lambda: shutil.rmtree(root, ignore_errors=True))


def kill_sandbox_processes(root: Path) -> int:
    """SIGKILL every process marked with ``KNOWMETER_SANDBOX=<root>`` (processes an agent left
    behind, in whatever process group or session); return how many. Linux only (reads
    ``/proc/<pid>/environ``); elsewhere it does nothing and returns 0. Blocking: call in a thread."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    marker = f"{SANDBOX_ENV_VAR}={root}".encode()
    killed = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours
            continue
        if marker in environ.split(b"\0"):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


@dataclass(slots=True)
class ProcessOutcome:
    """How a process ended. ``returncode`` is negative when a signal ended it; ``stderr`` is the
    last ``STDERR_KEPT`` bytes the process wrote there."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    elapsed_s: float

    def stderr_tail(self, limit: int = 600) -> str:
        """The last ``limit`` characters of stderr, decoded, on one line."""
        text = self.stderr.decode("utf-8", "replace").strip()
        return " | ".join(text[-limit:].splitlines())


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


#: How much of an agent CLI's stderr is kept (bytes, its end): only its tail is ever shown, and an
#: agent may print hundreds of megabytes there.
STDERR_KEPT = 1 << 16


async def _drain(stream: ByteReceiveStream | None, buf: bytearray, done: anyio.Event, keep: int | None = None) -> None:
    """Read ``stream`` to its end into ``buf`` (only its last ``keep`` bytes, when given)."""
    try:
        if stream is not None:
            async for chunk in stream:
                buf.extend(chunk)
                if keep is not None and len(buf) > 2 * keep:
                    del buf[:-keep]
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


async def run_process(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float | None, stdin_path: Path | None = None
) -> ProcessOutcome:
    """Run ``argv`` in a new session (its own process group), stdin from ``stdin_path`` or /dev/null.

    On timeout (or cancellation) the whole group gets SIGTERM, then SIGKILL after a grace
    period; ``timed_out`` is set and the output read so far is kept. When the main process has
    exited, children still holding its pipes get a short grace and are then killed with the group.
    """
    started = time.monotonic()
    out, err = bytearray(), bytearray()
    drained = (anyio.Event(), anyio.Event())
    with open(stdin_path or os.devnull, "rb") as stdin:  # a local file: opening it does not block
        proc = await anyio.open_process(list(argv), cwd=cwd, env=dict(env), stdin=stdin, start_new_session=True)
    try:
        with anyio.move_on_after(timeout_s) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stdout, out, drained[0])
                tg.start_soon(_drain, proc.stderr, err, drained[1], STDERR_KEPT)
                await proc.wait()
                with anyio.move_on_after(_PIPE_DRAIN_S):
                    for event in drained:
                        await event.wait()
                if not all(event.is_set() for event in drained):
                    _signal_group(proc.pid, signal.SIGKILL)
                    with anyio.move_on_after(0.5):
                        for event in drained:
                            await event.wait()
                    tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                _signal_group(proc.pid, signal.SIGTERM)
                with anyio.move_on_after(_KILL_GRACE_S):
                    await proc.wait()
            _signal_group(proc.pid, signal.SIGKILL)
            await proc.wait()
            await proc.aclose()
    kept_err = bytes(err[-STDERR_KEPT:])
    return ProcessOutcome(proc.returncode, bytes(out), kept_err, scope.cancelled_caught, time.monotonic() - started)
