"""A benchmark project for the built-in ``echo`` executor (``knowmeter eval --executor echo``: each
answer is its prompt, at once — the runner's own overhead, no agent)."""

from __future__ import annotations

import json
from pathlib import Path


def make_project(root: Path, n: int) -> None:
    """A project of ``n`` one-assertion samples and two one-line skills, ``a`` and ``b``."""
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "a.md").write_text("Skill A.\n")
    (root / "skills" / "b.md").write_text("Skill B.\n")
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "sample_id": f"s{i:06d}",
                        "prompt": f"question {i}",
                        "assertions": [{"type": "contains", "value": "question"}],
                    }
                )
                + "\n"
            )
