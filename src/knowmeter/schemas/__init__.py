"""JSON Schemas of the files users write — ``eval.yaml`` and sample files — shipped in this package
beside ``report.json``'s (``knowmeter/report/report.schema.json``). They are generated from the
models that load those files (regenerate with ``python -m knowmeter.schemas``; a test keeps the
shipped files in step and checks that the loader and the schemas agree). ``knowmeter init`` copies
them into the project, where the files it writes point at them; ``knowmeter docs --schema NAME``
prints one."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: schema name → (package holding the shipped file, file name)
SCHEMAS: dict[str, tuple[str, str]] = {
    "eval": ("knowmeter.schemas", "eval.schema.json"),
    "samples": ("knowmeter.schemas", "samples.schema.json"),
    "report": ("knowmeter.report", "report.schema.json"),
    "activation": ("knowmeter.activation", "activation.schema.json"),
}
#: the schemas ``knowmeter init`` writes into a project (beside eval.yaml and the sample file)
PROJECT_SCHEMAS = ("eval", "samples")


def shipped_text(name: str) -> str:
    """The shipped schema ``name`` (a key of ``SCHEMAS``) as its file's text."""
    package, file = SCHEMAS[name]
    return (resources.files(package) / file).read_text(encoding="utf-8")


def generated(name: str) -> dict[str, Any]:
    """The schema ``name`` generated from the models now (``eval`` or ``samples``)."""
    from knowmeter.schemas._generate import eval_schema, samples_schema

    return {"eval": eval_schema, "samples": samples_schema}[name]()


def as_text(schema: dict[str, Any]) -> str:
    """A schema as it is written to its file."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


__all__ = ["PROJECT_SCHEMAS", "SCHEMAS", "as_text", "generated", "shipped_text"]
