"""The ``openai`` and ``anthropic`` executors against the scripted model server; the price table."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from knowmeter.errors import InputError
from knowmeter.executors import (
    ExecRequest,
    ExecResult,
    ExecutorError,
    ExecutorSpec,
    ExecutorUnavailable,
    create_executor,
)
from knowmeter.executors._prices import PRICES_AS_OF, cost_usd, price_for
from knowmeter.traces import make_usage
from tests.support.mock_model import ServerFactory

pytestmark = pytest.mark.agents

ANSWER = {"steps": [{"text": "Bananas are yellow."}], "usage": {"input_tokens": 1000, "output_tokens": 200}}


def _run(
    name: str,
    model: str,
    options: dict[str, Any],
    system: str | None = "SKILL: answer in one line",
    prompt: str = "What colour are bananas?",
) -> ExecResult:
    executor = create_executor(ExecutorSpec(name, model, {"api_key": "test", "max_retries": 0, **options}))
    request = ExecRequest(task_id="s1::v::r0", sample_id="s1", prompt=prompt, system=system, timeout_s=30)
    return anyio.run(executor.run, request)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_executor_single_turn(mock_server: ServerFactory, api: str) -> None:
    srv = mock_server(ANSWER)
    result = _run("openai", "gpt-4o-2024-08-06", {"base_url": srv.openai_base_url, "api": api})
    assert result.ok and result.output == "Bananas are yellow."
    assert result.usage == make_usage(1000, 200, 0, None)
    assert result.cost_usd == pytest.approx((1000 * 2.50 + 200 * 10.0) / 1e6)  # gpt-4o list price
    assert [(e.role, e.text) for e in result.trace.messages()] == [
        ("user", "What colour are bananas?"),
        ("assistant", "Bananas are yellow."),
    ]
    body = srv.model_requests()[0]["body"]
    if api == "chat":
        assert srv.model_requests()[0]["path"] == "/v1/chat/completions"
        assert body["messages"][0] == {"role": "system", "content": "SKILL: answer in one line"}
    else:
        assert srv.model_requests()[0]["path"] == "/v1/responses"
        assert body["instructions"] == "SKILL: answer in one line" and body["input"] == "What colour are bananas?"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_cached_tokens_are_kept_apart_from_input(mock_server: ServerFactory, api: str) -> None:
    """OpenAI counts cached tokens inside its input count; ``Usage`` means the same for every
    provider (``USAGE_KEYS``): input without the cache reads, which are priced at the cache rate."""
    srv = mock_server({**ANSWER, "usage": {"input_tokens": 1000, "output_tokens": 200, "cached_tokens": 400}})
    result = _run("openai", "gpt-4o", {"base_url": srv.openai_base_url, "api": api})
    assert result.usage == make_usage(600, 200, 400, None)
    assert result.cost_usd == pytest.approx((600 * 2.50 + 400 * 1.25 + 200 * 10.0) / 1e6)


def test_baseline_sends_no_system_prompt(mock_server: ServerFactory) -> None:
    srv = mock_server(ANSWER)
    _run("openai", "gpt-4o", {"base_url": srv.openai_base_url}, system=None)
    _run("anthropic", "claude-haiku-4-5", {"base_url": srv.anthropic_base_url}, system=None)
    chat, messages = (r["body"] for r in srv.model_requests())
    assert [m["role"] for m in chat["messages"]] == ["user"]
    assert "system" not in messages and "SKILL" not in json.dumps([chat, messages])


def test_anthropic_executor_single_turn(mock_server: ServerFactory) -> None:
    srv = mock_server(
        {
            **ANSWER,
            "usage": {
                "input_tokens": 1000,
                "output_tokens": 200,
                "cache_read_input_tokens": 500,
                "cache_creation_input_tokens": 100,
            },
        }
    )
    result = _run("anthropic", "claude-haiku-4-5-20251001", {"base_url": srv.anthropic_base_url, "max_tokens": 64})
    assert result.ok and result.output == "Bananas are yellow." and result.num_turns == 1
    assert result.usage == make_usage(1000, 200, 500, 100)
    assert result.cost_usd == pytest.approx((1000 * 1 + 200 * 5 + 500 * 0.10 + 100 * 1.25) / 1e6)
    body = srv.model_requests()[0]["body"]
    assert body["system"] == "SKILL: answer in one line" and body["max_tokens"] == 64
    assert result.trace.meta["stop_reason"] == "end_turn"


def test_unknown_model_has_unknown_cost(mock_server: ServerFactory) -> None:
    srv = mock_server(ANSWER)
    result = _run("openai", "my-local-llama", {"base_url": srv.openai_base_url})
    assert result.ok and result.usage["input_tokens"] == 1000 and result.cost_usd is None


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_client_error_is_an_error_result_and_server_error_is_retryable(mock_server: ServerFactory, name: str) -> None:
    srv = mock_server(
        {
            "": {"steps": [{"http_error": 400, "message": "scripted invalid request"}]},
            "FLAKY": {"steps": [{"http_error": 503, "message": "overloaded, try later"}]},
        }
    )
    base = srv.openai_base_url if name == "openai" else srv.anthropic_base_url
    model = "gpt-4o" if name == "openai" else "claude-haiku-4-5"
    result = _run(name, model, {"base_url": base})
    assert result.error is not None and "400" in result.error and "scripted invalid request" in result.error
    assert result.output == "" and result.cost_usd is None
    with pytest.raises(ExecutorError, match="503"):
        _run(name, model, {"base_url": base}, prompt="FLAKY question")


def test_unreachable_server_is_retryable() -> None:
    with pytest.raises(ExecutorError):
        _run("anthropic", "claude-haiku-4-5", {"base_url": "http://127.0.0.1:9"})


def test_configuration_errors_are_one_line() -> None:
    with pytest.raises(InputError, match="needs a model"):
        create_executor(ExecutorSpec("openai", None, {"api_key": "k"}))
    with pytest.raises(InputError, match=r"option temprature: .*valid options: .*temperature"):
        create_executor(ExecutorSpec("anthropic", "m", {"api_key": "k", "temprature": 0}))
    with pytest.raises(InputError, match="option api: "):
        create_executor(ExecutorSpec("openai", "m", {"api_key": "k", "api": "completions"}))


def test_missing_key_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        create_executor(ExecutorSpec("anthropic", "claude-haiku-4-5", {}))


@pytest.mark.parametrize(("name", "extra"), [("openai", "openai"), ("anthropic", "anthropic")])
def test_missing_sdk_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch, name: str, extra: str) -> None:
    monkeypatch.setitem(sys.modules, name, None)  # makes `import <name>` fail
    with pytest.raises(ExecutorUnavailable, match=rf"pip install 'knowmeter\[{extra}\]'"):
        create_executor(ExecutorSpec(name, "m", {"api_key": "k"}))


def test_identity_changes_with_answer_relevant_options_only() -> None:
    def ident(model: str, **options: Any) -> str:
        return create_executor(ExecutorSpec("openai", model, {"api_key": "k", **options})).identity()

    assert ident("gpt-4o") == ident("gpt-4o", api_key="other-key", timeout_s=5)
    assert (
        len({ident("gpt-4o"), ident("gpt-4o-mini"), ident("gpt-4o", api="responses"), ident("gpt-4o", temperature=0.5)})
        == 4
    )
    assert "other-key" not in ident("gpt-4o", api_key="other-key")


def test_price_table() -> None:
    assert PRICES_AS_OF.count("-") == 2
    assert price_for("claude-3-5-haiku-20241022") == price_for("claude-3-5-haiku")
    assert price_for("gpt-4o-mini-2024-07-18") == price_for("gpt-4o-mini") != price_for("gpt-4o")
    assert price_for("gpt-5.5") is None and price_for("gpt-5-pro") is None and price_for(None) is None
    # one meaning of usage for every provider: input_tokens exclude the cache reads and writes
    assert cost_usd("gpt-4o", make_usage(600, 0, 400)) == pytest.approx((600 * 2.50 + 400 * 1.25) / 1e6)
    assert cost_usd("claude-haiku-4-5", make_usage(1000, 10, 400, 50)) == pytest.approx(
        (1000 * 1 + 10 * 5 + 400 * 0.10 + 50 * 1.25) / 1e6
    )
    assert cost_usd("gpt-4o", make_usage(None, 10)) is None
