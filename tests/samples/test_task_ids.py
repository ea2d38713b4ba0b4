"""Task ids are unambiguous: names that could make two tasks share an id are refused."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowmeter.runner import task_id
from knowmeter.samples import id_name_problem
from tests.support.cli import km

names = st.text(alphabet=":ab", min_size=1, max_size=6).filter(lambda n: id_name_problem(n) is None)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # slow only on a loaded machine
@given(a=st.tuples(names, names, st.integers(0, 3)), b=st.tuples(names, names, st.integers(0, 3)))
@pytest.mark.slow
def test_allowed_names_never_collide(a: tuple[str, str, int], b: tuple[str, str, int]) -> None:
    assert (task_id(*a) == task_id(*b)) == (a == b)


def test_the_colliding_pair_of_the_issue_is_refused() -> None:
    assert task_id("a", "v1::v2", 0) == task_id("a::v1", "v2", 0)  # why the names are refused
    for bad in ("v1::v2", "a::v1", ":x", "x:"):
        assert id_name_problem(bad)
    assert all(id_name_problem(n) is None for n in ("a:b", "git:main:x", "s-1"))
    assert len({task_id(s, v, 0) for s, v in itertools.product(["a", "a:b"], ["b", "b:c"])}) == 4


def test_ambiguous_sample_id_and_variant_name_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('[{"sample_id": "a::v1", "prompt": "p"}]')
    r = km("eval", "--samples", "s.json", "--control", "baseline", cwd=tmp_path)
    assert r.returncode == 2 and "sample 'a::v1'" in r.stderr and "'::'" in r.stderr, r.stderr
    (tmp_path / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    (tmp_path / "eval.yaml").write_text("samples: s.json\nvariants: [{name: 'v1::v2', artifact: baseline}]\n")
    r = km("eval", cwd=tmp_path)
    assert r.returncode == 2 and "variant name 'v1::v2'" in r.stderr, r.stderr
