"""The scripted model server speaks what the official SDKs parse, plays its script by the number of
tool results in the request, routes by marker, and logs every request."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

from tests.support.mock_model import MockModelServer, conversation_text, count_tool_results, load_scenario

TOOL_THEN_TEXT = {
    "side_text": "A title",
    "usage": {"input_tokens": 7, "output_tokens": 3},
    "anthropic": [
        {"preamble": "Searching.", "tool": {"name": "Grep", "input": {"pattern": "banana"}}},
        {"text": "found it"},
    ],
    "openai": [{"shell": "grep -rn banana ."}, {"text": "found it"}],
}


def test_anthropic_streaming_tool_call_then_text() -> None:
    with MockModelServer(TOOL_THEN_TEXT) as srv:
        client = anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k", max_retries=0)
        msgs: list[anthropic.types.MessageParam] = [{"role": "user", "content": "find banana"}]
        tools = [{"name": "Grep", "description": "search", "input_schema": {"type": "object"}}]
        with client.messages.stream(model="claude-x", max_tokens=100, messages=msgs, tools=tools) as stream:  # type: ignore[arg-type]
            first = stream.get_final_message()
        assert [b.type for b in first.content] == ["text", "tool_use"] and first.stop_reason == "tool_use"
        call = first.content[1]
        assert call.type == "tool_use" and call.name == "Grep" and call.input == {"pattern": "banana"}
        assert first.usage.input_tokens == 7 and first.usage.output_tokens == 3
        msgs += [
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "x"}]},
        ]
        second = client.messages.create(model="claude-x", max_tokens=100, messages=msgs, tools=tools)  # type: ignore[arg-type]
        assert second.content[0].type == "text" and second.content[0].text == "found it"
        assert [r["step"] for r in srv.model_requests()] == [0, 1]


@pytest.mark.slow
def test_openai_responses_streaming_function_call() -> None:
    with MockModelServer(TOOL_THEN_TEXT) as srv:
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)
        events = list(client.responses.create(model="gpt-5.5", input="find banana", stream=True))
        assert events[0].type == "response.created" and events[-1].type == "response.completed"
        final = events[-1].response
        item = final.output[0]
        assert item.type == "function_call" and item.name == "exec_command"
        assert json.loads(item.arguments) == {"cmd": "grep -rn banana ."}
        follow = client.responses.create(
            model="gpt-5.5",
            input=[
                {"role": "user", "content": "find banana"},
                {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments},
                {"type": "function_call_output", "call_id": item.call_id, "output": "./fruits.txt:2"},
            ],
        )
        assert follow.output_text == "found it" and follow.usage is not None and follow.usage.input_tokens == 7


def test_chat_completions_streaming_and_not() -> None:
    scenario = {"steps": [{"text": "plain answer"}], "usage": {"input_tokens": 11, "output_tokens": 5}}
    with MockModelServer(scenario) as srv:
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)
        msgs = [{"role": "user", "content": "hi"}]
        done = client.chat.completions.create(model="m", messages=msgs)  # type: ignore[arg-type]
        assert done.choices[0].message.content == "plain answer" and done.usage is not None
        assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (11, 5)
        chunks = list(
            client.chat.completions.create(
                model="m",
                messages=msgs,
                stream=True,  # type: ignore[call-overload]
                stream_options={"include_usage": True},
            )
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "plain answer"
        assert chunks[-1].usage.completion_tokens == 5


def test_markers_route_requests_to_scenarios() -> None:
    scenarios = {"SKILL-MARK": {"steps": [{"text": "treatment"}]}, "": {"steps": [{"text": "baseline"}]}}
    with MockModelServer(scenarios) as srv:
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)

        def ask(system: str) -> str | None:
            msgs = [{"role": "system", "content": system}, {"role": "user", "content": "q"}]
            return client.chat.completions.create(model="m", messages=msgs).choices[0].message.content  # type: ignore[arg-type]

        assert ask("use SKILL-MARK here") == "treatment"
        assert ask("nothing special") == "baseline"
        assert [r["marker"] for r in srv.model_requests()] == ["SKILL-MARK", ""]
    with MockModelServer({"only-this": {"steps": [{"text": "x"}]}}) as srv:
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="no scenario matches"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])


def test_scripted_errors_side_requests_and_exhaustion() -> None:
    scenario = {"side_text": "Short title", "anthropic": [{"http_error": 400, "message": "scripted invalid request"}]}
    with MockModelServer(scenario) as srv:
        client = anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="scripted invalid request") as err:
            client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}])
        assert err.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        # a side request (tools: []) asking for a JSON title gets side_text, whatever the step
        side = client.messages.create(
            model="m",
            max_tokens=5,
            messages=[{"role": "user", "content": "q"}],
            tools=[],
            extra_body={"output_config": {"format": {"type": "json_schema", "schema": {"properties": {"title": {}}}}}},
        )
        assert side.content[0].type == "text" and json.loads(side.content[0].text) == {"title": "Short title"}
    with MockModelServer({"steps": [{"text": "only"}]}) as srv:
        client = anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k", max_retries=0)
        msgs = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
        late = client.messages.create(model="m", max_tokens=5, messages=msgs)  # type: ignore[arg-type]
        assert late.content[0].text == "[mock: scenario exhausted]"  # type: ignore[union-attr]


def test_sleep_step_delays_the_reply() -> None:
    with MockModelServer({"steps": [{"text": "late", "sleep": 0.4}]}) as srv:
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)
        t0 = time.monotonic()
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert time.monotonic() - t0 >= 0.4


def test_every_request_is_logged_to_jsonl(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with MockModelServer(TOOL_THEN_TEXT, log_path=log) as srv:
        base = srv.base_url
        urllib.request.urlopen(urllib.request.Request(base + "/", method="HEAD")).close()
        models = json.load(urllib.request.urlopen(base + "/v1/models"))
        assert "gpt-5.5" in [m["id"] for m in models["data"]]
        req = urllib.request.Request(
            base + "/v1/messages/count_tokens",
            method="POST",
            data=json.dumps({"messages": [{"role": "user", "content": "hello"}]}).encode(),
        )
        assert json.load(urllib.request.urlopen(req))["input_tokens"] > 0
        anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="k").messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}]
        )
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(r["method"], r["path"]) for r in lines] == [
        ("HEAD", "/"),
        ("GET", "/v1/models"),
        ("POST", "/v1/messages/count_tokens"),
        ("POST", "/v1/messages"),
    ]
    assert lines[-1]["body"]["messages"] == [{"role": "user", "content": "q"}] and lines[-1]["step"] == 0
    headers = lines[-1]["headers"]
    assert "anthropic-version" in headers and "k" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def test_request_reading_helpers(shared_dir: Path) -> None:
    body = {
        "system": [{"type": "text", "text": "SYS"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "ask"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "SECRET-OUTPUT"}]},
        ],
    }
    assert conversation_text(body) == "SYS\nask" and count_tool_results(body) == 1
    responses = {
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
            {"type": "function_call_output", "call_id": "c", "output": "o"},
        ]
    }
    assert conversation_text(responses) == "dev" and count_tool_results(responses) == 1
    # the probe's own scenario files load as they are
    scenario = load_scenario(shared_dir / "reference" / "agent-clis" / "scenarios" / "claude_full.json")
    assert len(scenario["anthropic"]) == 5
