"""The mutation check runs in CI (issue 36 point 6): every mutation it applies to a copy of the
tree is caught by mypy or a targeted test (see ``tests/mutation/check.py``)."""

from __future__ import annotations

import pytest

from tests.mutation.check import MUTATIONS, main


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_every_mutation_is_caught() -> None:
    lines: list[str] = []
    assert main([], lines.append) == 0, "\n".join(lines)
    assert len([line for line in lines if ": caught by " in line]) == len(MUTATIONS)
    kinds = {m.kind for m in MUTATIONS}
    assert len(kinds) == 3 and all(sum(m.kind == k for m in MUTATIONS) >= 3 for k in kinds)
