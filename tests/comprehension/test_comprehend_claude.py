"""A comprehension run with the REAL Claude Code CLI as the agent (pinned in tests/agents),
against the scripted model server: the server answers with the skill-informed script only to
requests that carry the skill, so the baseline arm provably never saw it; the answers are graded
through the whole comprehension path (verbatim check, Appendix A prompt, reply checks). The agent
is pointed at the server by ``knowmeter comprehend -O KEY=VALUE``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from tests.support.agents import agent_cli, executor_options
from tests.support.mock_model import MockModelServer

pytestmark = pytest.mark.agents

MARKER = "LOQUAT-5519"
SKILL = f"""---
name: refund-policy
description: How support decides refunds ({MARKER}).
concept:
  definition: A refund policy is the written rule set that decides when a customer gets money back.
  mental_model: Eligibility window, consumption share, channel, dispute state.
  purpose: Identical requests used to get different answers; the rule makes them predictable.
  boundary: Pricing belongs to billing-plans; fraud belongs to trust-and-safety.
  taxonomy: Full and prorated refunds are alternatives.
  analogy: A return desk that cannot renegotiate the price.
  misconception: That a refund can be issued while a chargeback is open. An open dispute freezes refunds.
---

# Refund policy {MARKER}

## Verification
- [ ] The dispute state was checked before any refund is promised.

## Do NOT Use When
| Instead of this skill | Use | Why |
|---|---|---|
| Pricing changes | billing-plans | not a refund |
"""
EVALS = {
    "skill_name": "refund-policy",
    "evals": [
        {
            "id": 1,
            "prompt": "A customer opened a chargeback yesterday. Can we refund them now to calm them down?",
            "comprehension_dimension": "C7",
            "expected_behaviors": [
                {
                    "id": "flags_misconception",
                    "kind": "positive",
                    "description": "Says no: an open chargeback dispute freezes refunds",
                },
                {
                    "id": "no_partial_validation",
                    "kind": "negative",
                    "description": "Does not agree to refund during the dispute",
                },
            ],
        },
    ],
}
WITH_SKILL = "No. The open chargeback dispute freezes refunds until the bank rules; refunding now would pay twice."
BASELINE = "Sure, refund them right away to calm them down."


def test_claude_cli_answers_both_arms_and_is_graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude = agent_cli("claude")
    skill = tmp_path / "skills" / "refund-policy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (tmp_path / "evals.json").write_text(json.dumps(EVALS))
    scenarios = {MARKER: {"steps": [{"text": WITH_SKILL}]}, "": {"steps": [{"text": BASELINE}]}}
    with MockModelServer(scenarios, log_path=tmp_path / "requests.jsonl") as srv:
        options = [f"-O{k}={v}" for k, v in executor_options("claude", srv, bin=str(claude)).items()]
        monkeypatch.chdir(tmp_path)
        ran = CliRunner().invoke(
            cli,
            [
                "comprehend",
                "skills/refund-policy/SKILL.md",
                "--evals",
                "evals.json",
                "--executor",
                "claude",
                *options,
                "--judge",
                "scripted-grader",
                "--timeout",
                "240",
                "--retry",
                "0",
                "--json",
            ],
            catch_exceptions=False,
        )
        bodies = srv.bodies_text()
    # one case cannot tell the skill from the baseline: UNVERIFIED (rule cannot_tell), exit 1
    assert ran.exit_code == 1, ran.stderr
    report = json.loads(ran.stdout)
    assert (report["comprehension"]["verdict"]["level"], report["comprehension"]["verdict"]["rule"]) == (
        "UNVERIFIED",
        "cannot_tell",
    )
    tasks = {t["variant"]: t for t in report["tasks"]}
    assert {v: t["exec"]["error"] for v, t in tasks.items()} == {"baseline": None, "with-skill": None}
    assert tasks["with-skill"]["exec"]["output"].strip() == WITH_SKILL
    assert tasks["baseline"]["exec"]["output"].strip() == BASELINE
    marked = [b for b in bodies if MARKER in b]
    assert marked and len(marked) < len(bodies)  # the baseline's requests never carried the skill
    case = report["comprehension"]["cases"][0]
    skill_grading, base_grading = case["with_skill"][0], case["baseline"][0]
    assert skill_grading["graded"] and base_grading["graded"]
    assert skill_grading["verdict"] == "PASS" and base_grading["verdict"] == "FAIL"
    assert report["run"]["executor"]["name"] == "claude" and report["run"]["executor"]["non_llm"] is False
