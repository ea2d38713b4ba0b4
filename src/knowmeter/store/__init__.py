"""Run storage: run directories (run.json, results.jsonl, report.json) and the SQLite index."""

from knowmeter.store._index import list_runs, open_index, upsert_run, variant_history
from knowmeter.store._rundir import (
    ResultsWriter,
    RunDir,
    find_run,
    iter_results,
    new_run_id,
    read_json,
    write_json_atomic,
)

__all__ = [
    "ResultsWriter",
    "RunDir",
    "find_run",
    "iter_results",
    "list_runs",
    "new_run_id",
    "open_index",
    "read_json",
    "upsert_run",
    "variant_history",
    "write_json_atomic",
]
