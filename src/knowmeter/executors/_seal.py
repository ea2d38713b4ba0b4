"""Sealing a task's agent from every other task: a mount namespace (bubblewrap) per agent process.

Inside the seal the agent sees the machine read-only, except

- the folder every task's sandbox is made in (the temporary root) is an empty, private tmpfs:
  the other tasks' sandboxes (their workspaces, HOMEs, system prompts) do not exist there, and
  whatever the agent writes outside its own sandbox lands in that tmpfs and is gone when the
  process ends;
- the paths the run protects (every variant's artifact as configured, the sample files, the run
  store) are hidden the same way: the agent gets only the copy of its own artifact that the
  executor installed;
- its own sandbox (workspace, HOME, TMPDIR) is bound back read-write at the same path, so the
  paths in its trace are the real ones;
- the agent CLI's own install is bound back read-only when it lies in a hidden folder;
- a private ``/proc`` (its own PID namespace) and ``/dev``, so ``/proc/<pid>/cwd`` of another
  task's agent cannot be followed.

The network is shared (the agent must reach its model API). Where bubblewrap is missing or
cannot create namespaces, ``seal_problem`` says why; the executors then refuse to start unless
the user opted out of sealing (``unsealed``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["INSTALL_HINT", "Seal", "install_root", "seal_problem"]

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap)"
_PROBE_TIMEOUT_S = 30


#: The namespaces and mounts every seal starts from (the probe tries exactly these).
_NAMESPACES = (
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
)


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    argv = [bwrap, *_NAMESPACES, "--tmpfs", "/tmp", "--", "/bin/true"]
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
    """The folder a CLI needs to run: the ``node_modules`` folder it was installed in (npm puts
    the real binary in a sibling package), else the folder of the resolved binary."""
    real = binary.resolve()
    for parent in real.parents:
        if parent.name == "node_modules":
            return parent
    return real.parent


def _under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


@dataclass(frozen=True, slots=True)
class Seal:
    """How to seal one task: its sandbox ``root``, the temporary root the sandboxes are made in,
    paths to hide and folders the agent needs back (read-only)."""

    root: Path
    hide: tuple[Path, ...] = ()
    expose: tuple[Path, ...] = ()

    def argv(self, command: Sequence[str], *, cwd: Path) -> list[str]:
        """``command`` wrapped in ``bwrap`` with this seal, starting in ``cwd``."""
        shared = self.root.parent
        if shared == Path(shared.anchor):
            raise ValueError(f"cannot seal a sandbox made directly in {shared}: set TMPDIR to a folder")
        args = ["bwrap", *_NAMESPACES, "--tmpfs", str(shared)]
        args += _hide_args(p for p in self.hide if not _under(p.resolve(), shared))  # (already hidden)
        for folder in self.expose:
            real = folder.resolve()
            if any(_under(real, h.resolve()) for h in (shared, *self.hide)):
                args += ["--ro-bind", str(real), str(real)]
        args += ["--bind", str(self.root), str(self.root), "--chdir", str(cwd), "--", *command]
        return args


def _hide_args(paths: Iterable[Path]) -> list[str]:
    """An empty tmpfs over each existing folder, /dev/null over each existing file."""
    args: list[str] = []
    for p in sorted({q.resolve() for q in paths}):
        if p == Path(p.anchor):
            continue
        if p.is_dir():
            args += ["--tmpfs", str(p)]
        elif p.exists():
            args += ["--ro-bind", os.devnull, str(p)]
    return args
