"""A scripted model server for end-to-end tests of real agent CLIs and SDKs (a test fixture).

It speaks just enough of three wire formats for ``claude``, ``codex`` and the official SDKs to
run against it on 127.0.0.1:

- Anthropic Messages: ``POST /v1/messages`` (SSE or JSON), ``POST /v1/messages/count_tokens``,
  ``HEAD /`` (the claude CLI's warm-up).
- OpenAI Responses: ``POST /v1/responses`` (SSE or JSON).
- OpenAI Chat Completions: ``POST /v1/chat/completions`` (SSE or JSON); ``GET /v1/models``.

A *scenario* is the script (the JSON files in ``shared/reference/agent-clis/scenarios``)::

    {"side_text": "...",                      # reply to side requests (tools: [])
     "usage": {"input_tokens": 100, "output_tokens": 10},
     "anthropic": [STEP, ...], "openai": [STEP, ...]}   # or "steps" for both wire formats

where a STEP is ``{"text": "..."}``, ``{"tool": {"name": ..., "input": {...}}, "preamble": "..."}``,
``{"shell": "cmd"}`` (codex ``exec_command`` / claude ``Bash``) or
``{"http_error": 400, "message": "..."}``; any step may add ``"sleep": seconds``. ``{cwd}`` in a
step's tool input or shell command is replaced by the agent's working directory as its request
states it (claude: ``Primary working directory: …``; codex: ``<cwd>…</cwd>``), so a script can use
the absolute paths a model would.

The server does not count requests: it plays step N where N is the number of tool results
already in the request, so retries, warm-ups and side requests cannot shift the script.

One server can serve several scenarios: pass ``scenarios`` as a mapping from a *marker* to a
scenario; a request plays the first scenario whose marker occurs in its conversation text (system
prompt and messages, tool results excluded); the marker ``""`` is the default. Every request is
logged (method, path, headers with lower-case names, JSON body, the marker and step chosen) in
``requests`` and, when ``log_path`` is given, appended to that JSONL file.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MockModelServer", "Scenario", "ServerFactory", "conversation_text", "count_tool_results", "load_scenario"]

Scenario = dict[str, Any]
ScenarioSpec = Scenario | str | Path

DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 10}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_ids = itertools.count(1)


def load_scenario(spec: ScenarioSpec) -> Scenario:
    """A scenario from a dict (returned as is) or a JSON file path."""
    if isinstance(spec, dict):
        return spec
    return dict(json.loads(Path(spec).read_text(encoding="utf-8")))


def _new_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}{int(time.time() * 1000) % 100000:05d}"


# --------------------------------------------------------------------------- reading requests


def _text_of(content: Any, *, skip_types: tuple[str, ...] = ()) -> Iterable[str]:
    """Text pieces of a message ``content`` (a string or a list of blocks)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict) and block.get("type") not in skip_types:
                if isinstance(block.get("text"), str):
                    yield block["text"]
                elif "content" in block:
                    yield from _text_of(block["content"], skip_types=skip_types)


def conversation_text(body: Mapping[str, Any]) -> str:
    """System prompt and message text of a request in any of the three formats, tool results
    excluded (what a marker is matched against)."""
    parts: list[str] = []
    for key in ("system", "instructions"):
        parts.extend(_text_of(body.get(key)))
    for msg in body.get("messages") or []:
        if isinstance(msg, dict) and msg.get("role") != "tool":
            parts.extend(_text_of(msg.get("content"), skip_types=("tool_result",)))
    items = body.get("input")
    if isinstance(items, str):
        parts.append(items)
    elif isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and item.get("type", "message") == "message":
                parts.extend(_text_of(item.get("content")))
    return "\n".join(parts)


def count_tool_results(body: Mapping[str, Any]) -> int:
    """Tool results already in the request: the scenario step to play."""
    n = 0
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "tool":
            n += 1
        elif isinstance(msg.get("content"), list):
            n += sum(1 for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    items = body.get("input")
    if isinstance(items, list):
        n += sum(1 for i in items if isinstance(i, dict) and str(i.get("type", "")).endswith("_call_output"))
    return n


_CWD = re.compile(r"Primary working directory: (\S+)|<cwd>([^<]+)</cwd>")


def _with_cwd(step: Mapping[str, Any], text: str) -> Mapping[str, Any]:
    """``step`` with ``{cwd}`` in its tool input / shell command replaced by the request's cwd."""
    m = _CWD.search(text)
    if m is None or not any(k in step for k in ("tool", "shell")):
        return step
    cwd = m.group(1) or m.group(2)
    filled: Any = json.loads(json.dumps(step).replace("{cwd}", cwd.replace("\\", "\\\\").replace('"', '\\"')))
    return dict(filled)


def _is_side_request(body: Mapping[str, Any]) -> bool:
    return "tools" in body and not body["tools"]


def _side_text(body: Mapping[str, Any], text: str) -> str:
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        props = (fmt.get("schema") or {}).get("properties") or {"title": {}}
        return json.dumps({name: text for name in props})
    return text


# --------------------------------------------------------------------------- replies


def _step_parts(step: Mapping[str, Any], wire: str) -> tuple[str | None, tuple[str, dict[str, Any]] | None]:
    """(text, (tool name, tool input)) of a step for a wire format (``anthropic``/``openai``)."""
    text = step.get("text", step.get("preamble"))
    if "shell" in step:
        if wire == "anthropic":
            return text, ("Bash", {"command": step["shell"], "description": "run a shell command"})
        return text, ("exec_command", {"cmd": step["shell"]})
    tool = step.get("tool")
    if tool:
        return text, (str(tool["name"]), dict(tool.get("input") or {}))
    return text if text is not None else "", None


def _sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _anthropic_reply(step: Mapping[str, Any], model: str, usage: Mapping[str, int], stream: bool) -> tuple[str, bytes]:
    text, tool = _step_parts(step, "anthropic")
    blocks: list[dict[str, Any]] = []
    if text:
        blocks.append({"type": "text", "text": text})
    if tool:
        blocks.append({"type": "tool_use", "id": _new_id("toolu"), "name": tool[0], "input": tool[1]})
    stop = "tool_use" if tool else "end_turn"
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    full_usage = {key: usage.get(key, 0) for key in keys}
    message = {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": full_usage,
    }
    if not stream:
        return "application/json", json.dumps(message).encode()
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": {**full_usage, "output_tokens": 1}},
            },
        )
    ]
    for i, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": full_usage["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", _sse(events)


def _responses_reply(step: Mapping[str, Any], model: str, usage: Mapping[str, int], stream: bool) -> tuple[str, bytes]:
    text, tool = _step_parts(step, "openai")
    items: list[dict[str, Any]] = []
    if text:
        items.append(
            {
                "type": "message",
                "id": _new_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    if tool:
        items.append(
            {
                "type": "function_call",
                "id": _new_id("fc"),
                "call_id": _new_id("call"),
                "status": "completed",
                "name": tool[0],
                "arguments": json.dumps(tool[1]),
            }
        )
    inp, out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    response = {
        "id": _new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": items,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": inp,
            "output_tokens": out,
            "total_tokens": inp + out,
            "input_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    if not stream:
        return "application/json", json.dumps(response).encode()
    seq = itertools.count()
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "sequence_number": next(seq),
                "response": {**response, "status": "in_progress", "output": [], "usage": None},
            },
        )
    ]
    for idx, item in enumerate(items):
        added = {**item, "status": "in_progress"}
        if item["type"] == "message":
            added["content"] = []
        else:
            added["arguments"] = ""
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": idx,
                    "item": added,
                },
            )
        )
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(seq),
                        "item_id": item["id"],
                        "output_index": idx,
                        "content_index": 0,
                        "delta": item["content"][0]["text"],
                        "logprobs": [],
                    },
                )
            )
        else:
            events.append(
                (
                    "response.function_call_arguments.done",
                    {
                        "type": "response.function_call_arguments.done",
                        "sequence_number": next(seq),
                        "item_id": item["id"],
                        "output_index": idx,
                        "arguments": item["arguments"],
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": idx, "item": item},
            )
        )
    events.append(
        ("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": response})
    )
    return "text/event-stream", _sse(events)


def _chat_reply(
    step: Mapping[str, Any], model: str, usage: Mapping[str, int], stream: bool, include_usage: bool
) -> tuple[str, bytes]:
    text, tool = _step_parts(step, "openai")
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if tool:
        message["tool_calls"] = [
            {"id": _new_id("call"), "type": "function", "function": {"name": tool[0], "arguments": json.dumps(tool[1])}}
        ]
    finish = "tool_calls" if tool else "stop"
    inp, out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    usage_obj = {
        "prompt_tokens": inp,
        "completion_tokens": out,
        "total_tokens": inp + out,
        "prompt_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
    }
    base = {"id": _new_id("chatcmpl"), "created": int(time.time()), "model": model}
    if not stream:
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        completion = {**base, "object": "chat.completion", "usage": usage_obj, "choices": [choice]}
        return "application/json", json.dumps(completion).encode()
    chunk = {**base, "object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": text or ""}
    if tool:
        delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
    events: list[tuple[str | None, Any]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ]
    if include_usage:
        events.append((None, {**chunk, "choices": [], "usage": usage_obj}))
    events.append((None, "[DONE]"))
    return "text/event-stream", _sse(events)


def _error_body(wire: str, status: int, message: str, error_type: str | None) -> bytes:
    etype = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
    if wire == "anthropic":
        return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()
    return json.dumps({"error": {"message": message, "type": etype, "param": None, "code": None}}).encode()


# --------------------------------------------------------------------------- the server


class MockModelServer:
    """The scripted model server, run in a background thread on 127.0.0.1 (ephemeral port).

    Use as a context manager::

        with MockModelServer(scenarios={"": "claude_grep.json"}, log_path=tmp / "requests.jsonl") as srv:
            env = {"ANTHROPIC_BASE_URL": srv.anthropic_base_url, ...}
    """

    def __init__(
        self, scenarios: ScenarioSpec | Mapping[str, ScenarioSpec] | None = None, *, log_path: Path | str | None = None
    ) -> None:
        if scenarios is None:
            scenarios = {"": {"steps": [{"text": "ok"}]}}
        elif isinstance(scenarios, str | Path) or _looks_like_scenario(scenarios):
            scenarios = {"": scenarios}
        assert isinstance(scenarios, Mapping)
        self.scenarios: dict[str, Scenario] = {k: load_scenario(v) for k, v in scenarios.items()}
        self.log_path = Path(log_path) if log_path is not None else None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> MockModelServer:
        server = self

        class Handler(_Handler):
            mock = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="mock-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockModelServer:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # -- addresses
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """For ``ANTHROPIC_BASE_URL`` / ``anthropic.Anthropic(base_url=...)`` (no ``/v1``)."""
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        """For ``openai.OpenAI(base_url=...)`` and codex's provider ``base_url`` (with ``/v1``)."""
        return self.base_url + "/v1"

    # -- the log
    def model_requests(self) -> list[dict[str, Any]]:
        """Logged requests that asked the model for a reply (POSTs to a model endpoint)."""
        with self._lock:
            return [r for r in self.requests if r["method"] == "POST" and r.get("wire")]

    def bodies_text(self) -> list[str]:
        """The JSON body of each model request, as text (to check what an agent was shown)."""
        return [json.dumps(r["body"]) for r in self.model_requests()]

    def _log(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(record)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")

    def _pick(self, body: Mapping[str, Any]) -> tuple[str | None, Scenario | None]:
        text = conversation_text(body)
        for marker, scenario in self.scenarios.items():
            if marker and marker in text:
                return marker, scenario
        if "" in self.scenarios:
            return "", self.scenarios[""]
        return None, None

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


def _looks_like_scenario(obj: Mapping[str, Any]) -> bool:
    return any(k in obj for k in ("anthropic", "openai", "steps", "side_text"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mock: MockModelServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def do_HEAD(self) -> None:
        self.mock._log({"t": time.time(), "method": "HEAD", "path": self.path, "headers": self._headers(), "body": ""})
        self._send(200, "text/plain", b"")

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.mock._log({"t": time.time(), "method": "GET", "path": self.path, "headers": self._headers(), "body": ""})
        if path.rstrip("/") == "/v1/models":
            models = [
                {
                    "id": m,
                    "object": "model",
                    "type": "model",
                    "created": 0,
                    "owned_by": "mock",
                    "display_name": m,
                    "created_at": "2025-01-01T00:00:00Z",
                }
                for m in ("gpt-5.5", "claude-sonnet-4-5", "mock-model")
            ]
            body = {
                "object": "list",
                "data": models,
                "has_more": False,
                "first_id": models[0]["id"],
                "last_id": models[-1]["id"],
            }
            self._send(200, "application/json", json.dumps(body).encode())
        else:
            self._send(404, "application/json", _error_body("openai", 404, f"no route for GET {path}", None))

    def do_POST(self) -> None:
        raw = self._read_body()
        path = urlsplit(self.path).path.rstrip("/")
        try:
            body: Any = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record: dict[str, Any] = {
            "t": time.time(),
            "method": "POST",
            "path": self.path,
            "headers": self._headers(),
            "body": body,
        }
        wire = {"/v1/messages": "anthropic", "/v1/responses": "responses", "/v1/chat/completions": "chat"}.get(path)
        if path == "/v1/messages/count_tokens":
            self.mock._log(record)
            tokens = max(1, len(raw) // 4)
            self._send(200, "application/json", json.dumps({"input_tokens": tokens}).encode())
            return
        if wire is None or not isinstance(body, dict):
            self.mock._log(record)
            self._send(404, "application/json", _error_body("openai", 404, f"no route for POST {path}", None))
            return
        record["wire"] = wire
        self._reply(wire, body, record)

    def _reply(self, wire: str, body: dict[str, Any], record: dict[str, Any]) -> None:
        marker, scenario = self.mock._pick(body)
        record["marker"] = marker
        family = "anthropic" if wire == "anthropic" else "openai"
        if scenario is None:
            self.mock._log(record)
            self._send(
                500, "application/json", _error_body(family, 500, "mock: no scenario matches this request", "api_error")
            )
            return
        model = str(body.get("model") or "mock-model")
        usage = {**DEFAULT_USAGE, **(scenario.get("usage") or {})}
        stream = bool(body.get("stream"))
        if _is_side_request(body):
            record["step"] = "side"
            step: Mapping[str, Any] = {"text": _side_text(body, str(scenario.get("side_text", "Side reply")))}
        else:
            steps = scenario.get(family) or scenario.get("steps") or []
            n = count_tool_results(body)
            record["step"] = n
            step = steps[n] if n < len(steps) else {"text": "[mock: scenario exhausted]"}
            step = _with_cwd(step, conversation_text(body))
        self.mock._log(record)
        if step.get("sleep"):
            self.mock._sleep(float(step["sleep"]))
        if "http_error" in step:
            status = int(step["http_error"])
            message = str(step.get("message", "scripted error"))
            error = _error_body(family, status, message, step.get("error_type"))
            self._send(status, "application/json", error)
            return
        if wire == "anthropic":
            ctype, payload = _anthropic_reply(step, model, usage, stream)
        elif wire == "responses":
            ctype, payload = _responses_reply(step, model, usage, stream)
        else:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            ctype, payload = _chat_reply(step, model, usage, stream, include_usage)
        self._send(200, ctype, payload)


#: The type of the ``mock_server`` pytest fixture: ``mock_server(scenarios, **kwargs)`` → a started server.
ServerFactory = Callable[..., MockModelServer]
