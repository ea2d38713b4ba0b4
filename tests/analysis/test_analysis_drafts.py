"""Sample drafting from gaps (spec §8): deterministic drafts, optional LLM refinement, a YAML
writer that never overwrites silently."""

from __future__ import annotations

import json

import anyio
import pytest
import yaml

from knowmeter.analysis import GapSignal, aggregate_gaps, draft_samples, refine_drafts, write_drafts_yaml
from knowmeter.analysis import TaskGaps as TG
from knowmeter.errors import InputError
from knowmeter.samples import Sample, load_samples


def _fs(sid, tool, target):
    return GapSignal(sample_id=sid, source="failed_search", tool=tool, target=target, context="c")


@pytest.fixture
def summary(watermark):
    tasks = [
        TG(sample_id="s003", signals=(_fs("s003", "Grep", "revenue_schema"),)),
        TG(
            sample_id="s007",
            signals=(_fs("s007", "Grep", "revenue_schema"), GapSignal(sample_id="s007", source="hedging", context="x")),
        ),
        TG(sample_id="s009", signals=(_fs("s009", "Read", "/ws/docs/billing-cycles.md"),)),
        TG(sample_id="s010", signals=(_fs("s010", "Glob", "**/*.py"),)),
    ]
    return aggregate_gaps(tasks, watermark)


def test_drafts_from_failed_searches_and_uncovered_files(summary, tmp_path):
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge/tax.md").write_text("intro\n## VAT rates by country\n", encoding="utf-8")
    drafts = draft_samples(
        summary,
        ["knowledge/tax.md", "knowledge/late_fees.md"],
        existing_ids=["gap-revenue-schema"],
        knowledge_root=tmp_path,
    )
    ids = [d["sample_id"] for d in drafts]
    assert ids == ["gap-revenue-schema-2", "gap-billing-cycles", "cov-late-fees", "cov-vat-rates-by-country"]
    first = drafts[0]
    assert "revenue_schema" in first["prompt"]
    assert first["gap"] == {
        "source": "failed_search",
        "tool": "Grep",
        "target": "revenue_schema",
        "samples": ["s003", "s007"],
    }
    assert "2 sample(s): s003, s007" in first["rubric"]
    assert drafts[3]["truth_sources"] == ["knowledge/tax.md"]
    assert "VAT rates by country" in drafts[3]["prompt"] and "late fees" in drafts[2]["prompt"]
    for d in drafts:
        assert d["provenance"] == "gap-derived" and d["draft"] is True and d["rubric"]
        Sample.from_record(d)
    # a glob with no literal name names no topic: no draft from "**/*.py"
    assert "**/*.py" not in [d["gap"]["target"] for d in drafts]
    assert draft_samples(summary, ["knowledge/tax.md"], knowledge_root=tmp_path) == draft_samples(
        summary, ["knowledge/tax.md"], knowledge_root=tmp_path
    )
    assert len(draft_samples(summary, ["a.md", "b.md"], max_samples=2)) == 2


def test_yaml_writer_round_trips_and_refuses_to_overwrite(summary, tmp_path):
    drafts = draft_samples(summary, ["knowledge/tax.md"])
    out = write_drafts_yaml(drafts, tmp_path / "drafts" / "eval-samples.gaps.yaml", header="from run r1")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# from run r1\n")
    assert yaml.safe_load(text) == drafts
    loaded = load_samples(out)
    assert [s.sample_id for s in loaded.samples] == [d["sample_id"] for d in drafts]
    with pytest.raises(InputError, match="already exists"):
        write_drafts_yaml(drafts[:1], out)
    assert out.read_text(encoding="utf-8") == text
    write_drafts_yaml(drafts[:1], out, overwrite=True)
    assert len(yaml.safe_load(out.read_text(encoding="utf-8"))) == 1
    assert sorted(p.name for p in out.parent.iterdir()) == ["eval-samples.gaps.yaml"]


def test_refinement_by_an_executor_and_its_fallback(summary, scripted):
    drafts = draft_samples(summary, [])

    def reply(req):
        if "billing" in req.prompt:
            return "no json here"
        return json.dumps({"prompt": "Where is revenue_schema defined?", "rubric": "Cites the schema doc."})

    ex = scripted(reply)
    out = anyio.run(lambda: refine_drafts(drafts, ex, model="m"))
    assert out[0]["prompt"] == "Where is revenue_schema defined?" and out[0]["refined_by"] == "m"
    assert out[0]["provenance"] == "gap-derived" and out[0]["draft"] is True
    assert {k: v for k, v in out[1].items() if k != "refine_error"} == drafts[1]
    assert out[1]["refine_error"].startswith("unusable refining model reply: no JSON object with 'prompt'")
    assert out[1]["refine_error"].endswith("(after 1 retry)")
    assert len(ex.requests) == len(drafts) + 1  # the failed one was asked once more
    assert "<<<BEGIN DRAFT " in ex.requests[0].prompt and "<<<END DRAFT " in ex.requests[0].prompt


def test_refined_drafts_load_as_samples(summary, scripted, tmp_path):
    """What ``refine_drafts`` records on a draft (``refined_by`` / ``refine_error``) is a key the
    sample format knows: a reviewed draft file loads."""
    ex = scripted(lambda req: "no json" if "billing" in req.prompt else json.dumps({"prompt": "P?", "rubric": "R."}))
    out = anyio.run(lambda: refine_drafts(draft_samples(summary, []), ex, model="m"))
    assert {"refined_by", "refine_error"} <= {key for d in out for key in d}
    loaded = load_samples(write_drafts_yaml(out, tmp_path / "refined.yaml"))
    assert [s.sample_id for s in loaded.samples] == [d["sample_id"] for d in out]
