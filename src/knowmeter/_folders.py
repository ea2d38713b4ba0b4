"""System folders: never an agent's workspace (``cwd``) nor a knowledge folder to walk."""

from __future__ import annotations

from pathlib import Path

#: Folders a workspace or knowledge folder may never be (nor be inside, for the first three).
SYSTEM_FOLDERS = (
    "/proc",
    "/sys",
    "/dev",
    "/",
    "/usr",
    "/etc",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/boot",
    "/var",
    "/opt",
    "/root",
    "/home",
    "/tmp",
    "/run",
    "/srv",
    "/mnt",
    "/media",
    "/snap",
)


def system_folder(path: Path) -> Path | None:
    """``path`` resolved (symlinks, ``..``) when it is a system folder (or inside one of the first
    three), else None."""
    real = path.resolve()
    if str(real) in SYSTEM_FOLDERS or any(real.is_relative_to(p) for p in SYSTEM_FOLDERS[:3]):
        return real
    return None
