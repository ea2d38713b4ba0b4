"""Sealing a task's agent: a mount namespace (bubblewrap) per agent process, default deny.

Inside the seal the agent's file system is built from nothing. It holds only

- the system's programs and libraries, read-only: ``/usr``, ``/bin``, ``/sbin``, ``/lib*``,
  ``/opt`` and ``/etc`` — with the host's secrets in ``/etc`` (``shadow``, ``gshadow``, SSH host
  keys, ``ssl/private``) blanked — and ``/sys`` read-only;
- the agent CLI's own install (its ``node_modules``, or its binary) and the interpreter a script
  CLI starts with (``#!/usr/bin/env node``: its ``bin`` and ``lib``), read-only;
- folders the user allows (executor option ``seal_allow``), read-only;
- its own sandbox (workspace copy, private HOME, TMPDIR), read-write, at its real path so the paths
  in its trace are the real ones; nothing else of the folder the sandboxes are made in;
- a private, empty, writable ``/tmp`` and ``/var/tmp`` (gone with the process), ``/dev`` with the
  basic devices, and a private ``/proc`` (its own PID namespace), so ``/proc/<pid>/cwd`` or
  ``environ`` of any other process cannot be followed.

Nothing else of the host exists there: not the project (its ``.git``, its other folders, the
sample files, the run store, the other variants' artifacts), not the user's home, not the other
tasks' sandboxes — wherever TMPDIR and the project live. Paths the run protects that lie inside
a folder the agent is given (a sample file under ``/opt``, say) are blanked as well. Parent folders
of the sandbox exist only as empty directories, so no ``CLAUDE.md`` / ``AGENTS.md`` above the
workspace can be found by a CLI walking up from its working directory.

The network is the agent's own (``--unshare-net``: only its own loopback), so no two sealed tasks
can talk (a loopback server or an abstract unix socket of one arm is not there for the other);
its model API and the proxies its environment names are relayed in (``_netseal``). Where
bubblewrap is missing or cannot create these namespaces, ``seal_problem`` says why; the executors
then refuse to start unless the user opted out of sealing (``unsealed``).
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knowmeter.executors._netseal import Endpoint, interpreter_folders, relay_argv

__all__ = ["INSTALL_HINT", "SYSTEM_DIRS", "Seal", "install_root", "needed_folders", "seal_problem"]

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)"
_PROBE_TIMEOUT_S = 30

#: The host folders every sealed agent sees, read-only (those that exist on this machine).
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc")
#: Files and folders (globs) under the system folders that hold the host's secrets: blanked.
_SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*",
    "/etc/sudoers",
    "/etc/sudoers.d",
)
#: Scratch folders every agent gets empty and writable (CLIs and their own sandboxes need them).
_SCRATCH_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp")
#: The namespaces every seal starts from (the probe tries exactly these). Root inside is root of
#: its own user namespace only: no device nodes, no mounts of the host's devices; the network is
#: its own (loopback only, plus the relayed endpoints).
_NAMESPACES = ("--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net")
#: The agent runs one user namespace further in, so every mount of the seal is locked to the one
#: beneath it: no blank can be unmounted to uncover what it covers (mount_namespaces(7)).
_LOCK = ("bwrap", "--die-with-parent", "--unshare-user", "--dev-bind", "/", "/")


def _system_args() -> list[str]:
    """The read-only system part of the seal's file system (links kept as links)."""
    args: list[str] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    args += ["--ro-bind-try", "/sys", "/sys", "--dev", "/dev", "--proc", "/proc"]
    for scratch in _SCRATCH_DIRS:
        args += ["--tmpfs", scratch]
    return args


def _system_secrets() -> list[Path]:
    return [Path(p) for pattern in _SYSTEM_SECRETS for p in glob.glob(pattern)]


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    argv = [bwrap, *_NAMESPACES, *_system_args(), "--", *_LOCK, "--", "/bin/true"]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
        return f"{bwrap} cannot create a mount namespace here ({tail or f'exit {proc.returncode}'})"
    return None


def seal_problem() -> str | None:
    """None when tasks can be sealed on this machine, else why not (one line, with the fix)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bwrap not found; {INSTALL_HINT}"
    return _probe(bwrap)


def install_root(binary: Path) -> Path:
    """What of the host a CLI needs to run: the ``node_modules`` folder it was installed in (npm
    puts the real binary in a sibling package), else the resolved binary itself — not its folder,
    which may be HOME or ``~/Downloads`` (claude's and codex's own builds are single files)."""
    real = binary.resolve()
    for parent in real.parents:
        if parent.name == "node_modules":
            return parent
    return real


def _interpreter(script: Path, path_env: str) -> Path | None:
    """The program a ``#!`` script starts with (``#!/usr/bin/env node`` → ``node`` on PATH)."""
    try:
        with script.open("rb") as fh:
            first = fh.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        found = shutil.which(names[0], path=path_env) if names else None
        return Path(found) if found else None
    return Path(words[0])


def needed_folders(binary: Path, path_env: str | None = None) -> list[Path]:
    """What a sealed agent needs of the host besides the system folders: the CLI's install and,
    for a script CLI, its interpreter's install (``node`` from nvm, say)."""
    folders = [install_root(binary)]
    interpreter = _interpreter(binary.resolve(), path_env if path_env is not None else os.environ.get("PATH", ""))
    if interpreter is not None:
        real = interpreter.resolve()
        folders.append(real.parent)
        if real.parent.name == "bin":  # node under ~/.nvm/versions/node/vX/bin needs vX/lib; not
            folders.append(real.parent.parent / "lib")  # all of vX: in ~/.local that is ~/.local/share
    return folders


def _under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _is_system(path: Path) -> bool:
    return any(_under(path, Path(d).resolve()) for d in SYSTEM_DIRS if Path(d).exists())


@dataclass(frozen=True, slots=True)
class Seal:
    """How to seal one task: its sandbox ``root`` (made in the run's temporary root), paths to
    blank if they lie in a visible folder (``hide``), host folders the agent needs back read-only
    (``expose``), and the endpoints it may reach from its own network (``endpoints``, relayed
    through the unix sockets in ``net_dir``; host names mapped by the ``hosts`` file; see
    ``_netseal``)."""

    root: Path
    hide: tuple[Path, ...] = ()
    expose: tuple[Path, ...] = ()
    endpoints: tuple[Endpoint, ...] = ()
    net_dir: Path | None = None
    hosts: Path | None = None

    def argv(self, command: Sequence[str], *, cwd: Path) -> list[str]:
        """``command`` wrapped in ``bwrap`` with this seal, starting in ``cwd``. A program given by
        path is started by its real path (a symlink such as ``~/.local/bin/claude`` may lie in a
        folder the seal does not hold)."""
        if os.sep in command[0]:
            command = [str(Path(command[0]).resolve()), *command[1:]]
        shared = self.root.parent
        if shared == Path(shared.anchor):
            raise ValueError(f"cannot seal a sandbox made directly in {shared}: set TMPDIR to a folder")
        # the temporary root is empty (other tasks' sandboxes do not exist); the secrets and the
        # protected paths (the project itself, when it lies in /opt, say) blanked; what the agent
        # needs bound back — also from inside a blanked folder (a CLI installed in the project);
        # this task's sandbox; the skeleton read-only — and the agent one user namespace further
        # in, where none of it can be undone
        args = ["bwrap", *_NAMESPACES, *_system_args(), "--tmpfs", str(shared)]
        relay = self.endpoints and self.net_dir is not None
        needed = [*self.expose, *(interpreter_folders() if relay else ())]
        exposed = sorted({p.resolve() for p in needed if p.exists()})
        hidden = [p.resolve() for p in [*_system_secrets(), *self.hide] if p.exists()]
        hidden = [p for p in hidden if _is_system(p) or any(_under(p, f) for f in exposed)]
        args += _blank_args(p for p in hidden if _is_system(p))
        for folder in exposed:
            if not _is_system(folder) or any(_under(folder, h) for h in hidden):
                args += ["--ro-bind", str(folder), str(folder)]
        args += _blank_args(p for p in hidden if any(_under(p, f) and p != f for f in exposed))
        args += ["--bind", str(self.root), str(self.root)]
        if self.hosts is not None:
            args += ["--ro-bind", str(self.hosts), "/etc/hosts"]
        prefix: list[str] = []
        if relay:
            assert self.net_dir is not None
            args += ["--bind", str(self.net_dir), str(self.net_dir)]
            prefix = relay_argv(self.endpoints, self.net_dir)
        return [*args, "--remount-ro", "/", "--", *prefix, *_LOCK, "--chdir", str(cwd), "--", *command]


def _blank_args(paths: Iterable[Path]) -> list[str]:
    """An empty tmpfs over each existing folder, /dev/null over each existing file."""
    args: list[str] = []
    for p in sorted({q.resolve() for q in paths if q.exists()}):
        if p == Path(p.anchor):
            continue
        args += ["--tmpfs", str(p)] if p.is_dir() else ["--ro-bind", os.devnull, str(p)]
    return args
