"""The ``openai`` executor: one model call through the official OpenAI SDK.

Single turn: the artifact is the system message (``system_role: system|developer``) or the
Responses API's ``instructions``; the prompt is the user message. ``base_url`` points it at any
OpenAI-compatible server (vLLM, Ollama, LM Studio, a gateway). ``api: chat`` (default, the most
widely implemented) uses Chat Completions, ``api: responses`` the Responses API. Cost comes from
the dated price table (None for models not in it).
"""

from __future__ import annotations

import time
from typing import Any, Literal

from knowmeter import defaults
from knowmeter.executors._model_api import (
    ApiExecutor,
    ApiOptions,
    api_error_result,
    api_key,
    exchange_trace,
    import_sdk,
)
from knowmeter.executors._prices import cost_usd
from knowmeter.executors._protocol import ExecRequest, ExecResult, ExecutorError
from knowmeter.executors._registry import register_executor
from knowmeter.traces import Usage, empty_usage, make_usage

INSTALL_HINT = "install it with: pip install 'knowmeter[openai]'"
SOURCE = "openai"


class OpenAIOptions(ApiOptions):
    """Options of the ``openai`` executor."""

    api: Literal["chat", "responses"] = "chat"
    system_role: Literal["system", "developer"] = "system"


def _usage(total_input: int | None, output: int | None, details: Any) -> Usage:
    """OpenAI counts cached tokens inside the input; ``Usage`` keeps them apart (``USAGE_KEYS``)."""
    cached = getattr(details, "cached_tokens", None)
    fresh = total_input - cached if total_input is not None and cached is not None else total_input
    return make_usage(fresh, output, cached)


def _usage_chat(u: Any) -> Usage:
    if u is None:
        return empty_usage()
    return _usage(u.prompt_tokens, u.completion_tokens, getattr(u, "prompt_tokens_details", None))


def _usage_responses(u: Any) -> Usage:
    if u is None:
        return empty_usage()
    return _usage(u.input_tokens, u.output_tokens, getattr(u, "input_tokens_details", None))


class OpenAIExecutor(ApiExecutor[OpenAIOptions]):
    """A single-turn call to an OpenAI-compatible API."""

    name = SOURCE
    options_type = OpenAIOptions
    sdk = "openai"
    install_hint = INSTALL_HINT
    key_env = "OPENAI_API_KEY"

    async def _call(self, client: Any, model: str, request: ExecRequest) -> tuple[str, Usage, dict[str, Any]]:
        o = self.options
        common: dict[str, Any] = {"model": model}
        if o.temperature is not None:
            common["temperature"] = o.temperature
        if o.api == "responses":
            if request.system is not None:
                common["instructions"] = request.system
            if o.max_tokens:
                common["max_output_tokens"] = o.max_tokens
            resp = await client.responses.create(input=request.prompt, **common)
            return resp.output_text or "", _usage_responses(resp.usage), {"status": resp.status}
        messages = [{"role": "user", "content": request.prompt}]
        if request.system is not None:
            messages.insert(0, {"role": o.system_role, "content": request.system})
        if o.max_tokens:
            common["max_tokens"] = o.max_tokens
        resp = await client.chat.completions.create(messages=messages, **common)
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        finish = choice.finish_reason if choice is not None else None
        return text, _usage_chat(resp.usage), {"finish_reason": finish}

    async def run(self, request: ExecRequest) -> ExecResult:
        openai = import_sdk(self.sdk, self.install_hint)
        o = self.options
        model = request.model or self.model
        started = time.perf_counter()
        client = openai.AsyncOpenAI(
            api_key=api_key(SOURCE, o, self.key_env),
            base_url=o.base_url,
            max_retries=o.max_retries,
            timeout=o.timeout_s or request.timeout_s or defaults.AGENT_TIMEOUT_S,
        )
        try:
            async with client:
                text, usage, meta = await self._call(client, model, request)
        except openai.APIStatusError as exc:
            return api_error_result(SOURCE, exc.status_code, str(exc.message), request.prompt, model)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise ExecutorError(f"openai: {type(exc).__name__}: {exc}") from exc
        trace = exchange_trace(SOURCE, request.prompt, text, model)
        trace.meta.update(meta, api=o.api)
        return ExecResult(
            output=text,
            trace=trace,
            usage=usage,
            cost_usd=cost_usd(model, usage),
            latency_ms=(time.perf_counter() - started) * 1000,
            num_turns=1,
        )


register_executor("openai")(OpenAIExecutor.from_spec)
