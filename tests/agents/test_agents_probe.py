"""The model probe generator against the scripted model server (``openai`` executor): out-of-scope
questions dropped and counted, unbacked assertions left out, a reply that is not JSON retried once
then reported, every call charged to the budget; and ``knowmeter probe --generator`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import yaml
from click.testing import CliRunner

import knowmeter
from knowmeter.cli import cli
from knowmeter.probe import GeneratorReplyError, model_probe, write_probe_set
from knowmeter.samples import Sample, load_samples
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents

USAGE = {"input_tokens": 1000, "output_tokens": 200}
GPT4O_MINI_COST = (1000 * 0.15 + 200 * 0.60) / 1e6
REPLY = {
    "questions": [
        {
            "question": "How long do customers have to ask for a refund?",
            "element": "E4",
            "in_scope": True,
            "file": "kb/refunds.md",
            "terms": ["30 days", "fortnight"],
        },
        {
            "question": "Which payment methods do we accept?",
            "element": "E2",
            "in_scope": True,
            "file": "kb/nowhere.md",
            "terms": [],
        },
        {"question": "What is the capital of France?", "element": "E2", "in_scope": False},
        {"question": "Who won the match?", "element": "E99", "in_scope": True},
        {"question": "  ", "element": "E2"},
        {"question": "how long do customers have to ask for a REFUND", "element": "E2", "in_scope": True},
    ]
}


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "refunds.md").write_text("# Refunds\nRefunds are available within 30 days of purchase.\n", encoding="utf-8")
    (kb / "billing.md").write_text("# Billing\nInvoices are issued monthly.\n", encoding="utf-8")
    return kb


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")


def _serve(mock_server: ServerFactory, monkeypatch: pytest.MonkeyPatch, scenarios: object) -> MockModelServer:
    srv = mock_server(scenarios)
    monkeypatch.setenv("OPENAI_BASE_URL", srv.openai_base_url)
    return srv


def test_model_generator_checks_scope_and_assertions(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = _serve(mock_server, monkeypatch, {"steps": [{"text": json.dumps(REPLY)}], "usage": USAGE})
    existing = (Sample(sample_id="h1", prompt="Which payment methods do we accept?"),)
    result = anyio.run(lambda: model_probe([kb], "openai:gpt-4o-mini", count=10, existing=existing))
    assert (result.proposed, result.out_of_scope, result.malformed) == (6, 2, 1)
    assert result.calls == 1 and result.cost_usd == pytest.approx(GPT4O_MINI_COST)
    # "fortnight" is not in refunds.md and kb/nowhere.md does not exist: neither is asserted
    assert result.unbacked_assertions == 2
    assert result.draft.duplicates == 1 and result.draft.duplicates_of_existing == (
        ("Which payment methods do we accept?", "h1"),
    )
    [sample] = result.draft.samples
    assert sample["prompt"] == "How long do customers have to ask for a refund?"
    assert sample["assertions"] == [
        {"type": "tool_input_contains", "tool": "*", "value": "kb/refunds.md"},
        {"type": "icontains", "value": "30 days"},
    ]
    p = sample["probe"]
    assert (p["generator"], p["model"], p["llm"], p["prompt_version"]) == (
        "openai:gpt-4o-mini",
        "gpt-4o-mini",
        True,
        "probe-cq/1",
    )
    assert p["kb_sha256"] == result.structure.sha256 and p["element"]["text"] == "Refunds"
    [request] = srv.model_requests()
    sent = json.dumps(request["body"])
    assert "E4" in sent and "Which payment methods do we accept?" in sent  # structure + existing questions
    assert "within 30 days" not in sent  # the text is not sent without include_text


def test_include_text_sends_the_text(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = _serve(mock_server, monkeypatch, {"steps": [{"text": json.dumps(REPLY)}], "usage": USAGE})
    anyio.run(lambda: model_probe([kb], "openai:gpt-4o-mini", include_text=True))
    assert "within 30 days" in json.dumps(srv.model_requests()[0]["body"])


def test_reply_not_json_is_retried_once_then_reported(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = _serve(
        mock_server,
        monkeypatch,
        {
            "could not be used": {"steps": [{"text": "```json\n" + json.dumps(REPLY) + "\n```"}], "usage": USAGE},
            "": {"steps": [{"text": "Sure! Here are some questions: 1. refunds?"}], "usage": USAGE},
        },
    )
    result = anyio.run(lambda: model_probe([kb], "openai:gpt-4o-mini"))
    assert result.calls == 2 and len(result.draft.samples) == 2
    assert result.cost_usd == pytest.approx(2 * GPT4O_MINI_COST)
    retry = json.dumps(srv.model_requests()[1]["body"])
    assert "no JSON object with a 'questions' list in the reply" in retry

    srv2 = _serve(mock_server, monkeypatch, {"steps": [{"text": '{"questions": "none"}'}], "usage": USAGE})
    with pytest.raises(
        GeneratorReplyError,
        match=r"unusable generator reply: 'questions' is not a list of objects "
        r"\(after 1 retry\); 2 call\(s\) made",
    ):
        anyio.run(lambda: model_probe([kb], "openai:gpt-4o-mini"))
    assert len(srv2.model_requests()) == 2


def test_budget_refuses_a_second_call(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = _serve(mock_server, monkeypatch, {"steps": [{"text": "not json"}], "usage": USAGE})
    with pytest.raises(GeneratorReplyError, match=r"generator call failed: not called: the budget .* is spent"):
        anyio.run(lambda: model_probe([kb], "openai:gpt-4o-mini", budget_usd=GPT4O_MINI_COST * 1.2))
    assert len(srv.model_requests()) == 1  # the retry would not fit: not made


def test_probe_command_with_a_model_generator(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(mock_server, monkeypatch, {"steps": [{"text": json.dumps(REPLY)}], "usage": USAGE})
    res = CliRunner().invoke(cli, ["probe", "--kb", "kb", "--generator", "openai:gpt-4o-mini", "--out", "p.yaml"])
    assert res.exit_code == 0, res.output
    assert "model generator openai:gpt-4o-mini" in res.output and "1 model call(s) · cost $0.0003" in res.output
    assert "6 proposed · 2 kept · 2 dropped out of scope · 1 malformed · 1 duplicate(s) of each other" in res.output
    loaded = load_samples(Path("p.yaml"))
    assert [s.provenance for s in loaded.samples] == ["probe", "probe"]
    assert yaml.safe_load(Path("p.yaml").read_text(encoding="utf-8"))[0]["probe"]["model"] == "gpt-4o-mini"

    _serve(mock_server, monkeypatch, {"steps": [{"text": "no"}], "usage": USAGE})
    res = CliRunner().invoke(cli, ["probe", "--kb", "kb", "--generator", "openai:gpt-4o-mini", "--out", "q.yaml"])
    assert res.exit_code == 1 and not Path("q.yaml").exists()
    assert "unusable generator reply" in res.output and "(after 1 retry)" in res.output
    assert "nothing written" in res.output


def test_model_generator_over_the_anthropic_api(
    kb: Path, mock_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = mock_server({"steps": [{"text": "Here you go:\n" + json.dumps(REPLY)}], "usage": USAGE})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.anthropic_base_url)
    result = anyio.run(lambda: model_probe([kb], "anthropic:claude-haiku-4-5", count=10))
    assert [s["prompt"] for s in result.draft.samples] == [
        "How long do customers have to ask for a refund?",
        "Which payment methods do we accept?",
    ]
    assert result.cost_usd == pytest.approx((1000 * 1 + 200 * 5) / 1e6)  # claude-haiku-4-5 list price
    assert srv.model_requests()[0]["path"] == "/v1/messages"


def test_the_api_takes_knowledge_base_samples_and_budget_from_eval_yaml(
    kb: Path, mock_server: ServerFactory, api_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (kb.parent / "own.yaml").write_text(
        "- sample_id: h1\n  prompt: Which payment methods do we accept?\n", encoding="utf-8"
    )
    (kb.parent / "eval.yaml").write_text(
        f"knowledgeDirs: [kb]\nsamples: own.yaml\nbudget: {{totalUSD: {GPT4O_MINI_COST * 1.2}}}\n", encoding="utf-8"
    )
    srv = _serve(mock_server, monkeypatch, {"steps": [{"text": json.dumps(REPLY)}], "usage": USAGE})
    result = knowmeter.generate_probe_set(generator="openai:gpt-4o-mini", count=10)
    assert result.structure.roots == ("kb",)  # eval.yaml's knowledgeDirs
    assert [s["prompt"] for s in result.draft.samples] == ["How long do customers have to ask for a refund?"]
    assert len(result.draft.duplicates_of_existing) == 1  # eval.yaml's samples: own.yaml
    assert write_probe_set(result, "p.yaml").read_text(encoding="utf-8").startswith("# Probe sample set")

    _serve(mock_server, monkeypatch, {"steps": [{"text": "not json"}], "usage": USAGE})
    with pytest.raises(GeneratorReplyError, match=r"the budget .* is spent"):  # eval.yaml's budget binds
        knowmeter.generate_probe_set(generator="openai:gpt-4o-mini")
    assert len(srv.model_requests()) == 1
    (kb.parent / "no-kb.yaml").write_text("samples: own.yaml\n", encoding="utf-8")
    with pytest.raises(knowmeter.InputError, match="no knowledge base"):
        knowmeter.generate_probe_set(config=kb.parent / "no-kb.yaml")
