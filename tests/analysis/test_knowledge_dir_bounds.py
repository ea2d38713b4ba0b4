"""Knowledge folders are bounded like ``cwd``: a system folder is refused when the run is
configured (one line, exit 2) and never walked when a stored run names one; a walk stops after
a cap of files and says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from knowmeter.analysis import knowledge_files
from knowmeter.analysis._dirs import walk_knowledge_dir
from tests.support.cli import km


@pytest.mark.parametrize("folder", ["/", "/usr", "../../../../../../../../etc"])
def test_a_system_folder_is_refused_as_a_knowledge_folder(tmp_path: Path, folder: str) -> None:
    (tmp_path / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    (tmp_path / "eval.yaml").write_text(
        f"samples: s.json\nvariants: [{{name: base, artifact: baseline}}]\nknowledgeDirs: ['{folder}']\n"
    )
    r = km("eval", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "system folder" in r.stderr and "knowledge_dirs" in r.stderr


def test_a_stored_system_folder_is_not_walked(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="knowmeter"):
        files = knowledge_files(tmp_path, knowledge_dirs=[Path("/")])
    assert files == []
    assert any("system folder /" in m for m in caplog.messages)


def test_a_walk_stops_at_the_cap_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    for i in range(6):
        (kb / f"f{i}.md").write_text("x")
        (kb / "sub" / f"g{i}.md").write_text("x")
    with caplog.at_level(logging.WARNING, logger="knowmeter"):
        walked = list(walk_knowledge_dir(kb, limit=8))
    assert len(walked) == 8 and len(set(walked)) == 8
    assert any("more than 8 files" in m and "only the first 8" in m for m in caplog.messages)
    caplog.clear()
    assert len(list(walk_knowledge_dir(kb, limit=12))) == 12 and not caplog.messages
