"""Regenerate the shipped schemas: ``python -m knowmeter.schemas``."""

from pathlib import Path

from knowmeter.schemas import PROJECT_SCHEMAS, SCHEMAS, as_text, generated

for name in PROJECT_SCHEMAS:
    Path(__file__).with_name(SCHEMAS[name][1]).write_text(as_text(generated(name)), encoding="utf-8")
