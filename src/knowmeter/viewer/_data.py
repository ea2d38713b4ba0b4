"""What the viewer reads: the run index opened read-only, and a run's stored report looked up
by an id that must be in the index (no URL part ever becomes a filesystem path)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import escape

from knowmeter import defaults
from knowmeter.report import Report, read_report
from knowmeter.store import INDEX_FILE, variant_history

if TYPE_CHECKING:
    from knowmeter.activation import ActivationReport


class UnreadableIndex(Exception):
    """The run index cannot be read (damaged, or not SQLite): the message names it and the fix."""


@dataclass(frozen=True)
class Store:
    """A run store (``--output-dir``), read only."""

    root: Path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection | None]:
        path = self.root / INDEX_FILE
        if not path.is_file():
            yield None
            return
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=defaults.SQLITE_TIMEOUT_S)
        conn.row_factory = sqlite3.Row
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            raise UnreadableIndex(
                f"{path}: cannot read the run index ({exc}); run knowmeter runs --output-dir {self.root}: "
                "it moves a damaged index aside and rebuilds it from the run directories"
            ) from None
        finally:
            conn.close()

    def runs(self, limit: int = 500) -> list[dict[str, Any]]:
        """Newest first."""
        with self._connect() as conn:
            if conn is None:
                return []
            rows = conn.execute("SELECT * FROM runs ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))
            return [dict(r) for r in rows]

    def history(self) -> list[dict[str, Any]]:
        """Per-variant figures of complete runs, oldest first (the rows ``knowmeter trends`` reads,
        with the layer set of each composite)."""
        with self._connect() as conn:
            return [] if conn is None else [dict(r) for r in variant_history(conn)]

    def _run_file(self, run_id: str, name: str) -> Path | None:
        """``name`` in the directory of an indexed run, or None (unknown id, no such file)."""
        with self._connect() as conn:
            if conn is None or conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                return None
        runs_root = (self.root / "runs").resolve()
        path = (runs_root / run_id / name).resolve()
        if path.parent.parent != runs_root or not path.is_file():
            return None
        return path

    def report(self, run_id: str) -> Report | None:
        """The stored report.json of an indexed run, or None (unknown id, no report yet);
        ``InputError`` for one that cannot be read (damaged, older or newer)."""
        path = self._run_file(run_id, "report.json")
        return None if path is None else read_report(path, run_id)

    def stamp(self, run_id: str) -> tuple[int, ...] | None:
        """When and how big the run's stored report and results are (a search index built from
        them is current while this is the same), or None (unknown id, no report)."""
        report = self._run_file(run_id, "report.json")
        if report is None:
            return None
        files = [report, report.with_name("results.jsonl")]
        return tuple(n for f in files if f.is_file() for n in (f.stat().st_mtime_ns, f.stat().st_size))

    def stored_page(self, run_id: str, csp: str) -> str | None:
        """The run's stored report.html when it can be served as it is: written after its
        report.json (not stale) by this version's page script (its policy is ``csp``); else None."""
        page, data = self._run_file(run_id, "report.html"), self._run_file(run_id, "report.json")
        if page is None or data is None or page.stat().st_mtime_ns < data.stat().st_mtime_ns:
            return None
        try:
            text = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        meta = f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">'
        return text if meta in text[:4096] else None

    def activation_reports(self) -> list[ActivationReport]:
        """The readable ``activation.json`` of every activation run in the store, newest first."""
        from knowmeter.activation import ActivationReport, activation_store

        runs_root = activation_store(self.root) / "runs"
        out = []
        for folder in sorted(runs_root.iterdir(), reverse=True) if runs_root.is_dir() else []:
            try:
                out.append(ActivationReport.model_validate_json((folder / "activation.json").read_bytes()))
            except (OSError, ValueError):
                continue
        return out
