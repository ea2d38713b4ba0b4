"""The ``anthropic`` executor: one Messages API call through the official Anthropic SDK.

Single turn: the artifact is the ``system`` prompt, the prompt is the user message. ``base_url``
points it at any Messages-compatible endpoint (without ``/v1``). Cost comes from the dated price
table (None for models not in it); cache reads and writes are priced apart.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

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

INSTALL_HINT = "install it with: pip install 'knowmeter[anthropic]'"
SOURCE = "anthropic"


class AnthropicOptions(ApiOptions):
    """Options of the ``anthropic`` executor (``max_tokens`` is required by the API: default 4096)."""

    max_tokens: int | None = Field(default=4096, gt=0)


def _usage(u: Any) -> Usage:
    if u is None:
        return empty_usage()
    return make_usage(
        u.input_tokens,
        u.output_tokens,
        getattr(u, "cache_read_input_tokens", None),
        getattr(u, "cache_creation_input_tokens", None),
    )


class AnthropicExecutor(ApiExecutor[AnthropicOptions]):
    """A single-turn call to the Anthropic Messages API."""

    name = SOURCE
    options_type = AnthropicOptions
    sdk = "anthropic"
    install_hint = INSTALL_HINT
    key_env = "ANTHROPIC_API_KEY"

    async def run(self, request: ExecRequest) -> ExecResult:
        anthropic = import_sdk(self.sdk, self.install_hint)
        o = self.options
        model = request.model or self.model
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": o.max_tokens or 4096,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if request.system is not None:
            params["system"] = request.system
        if o.temperature is not None:
            params["temperature"] = o.temperature
        started = time.perf_counter()
        client = anthropic.AsyncAnthropic(
            api_key=api_key(SOURCE, o, self.key_env),
            base_url=o.base_url,
            max_retries=o.max_retries,
            timeout=o.timeout_s or request.timeout_s or defaults.AGENT_TIMEOUT_S,
        )
        try:
            async with client:
                msg = await client.messages.create(**params)
        except anthropic.APIStatusError as exc:
            return api_error_result(SOURCE, exc.status_code, str(exc.message), request.prompt, model)
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            raise ExecutorError(f"anthropic: {type(exc).__name__}: {exc}") from exc
        text = "".join(b.text for b in msg.content if getattr(b, "type", None) == "text")
        usage = _usage(msg.usage)
        trace = exchange_trace(SOURCE, request.prompt, text, model)
        trace.meta["stop_reason"] = msg.stop_reason
        return ExecResult(
            output=text,
            trace=trace,
            usage=usage,
            cost_usd=cost_usd(model, usage),
            latency_ms=(time.perf_counter() - started) * 1000,
            num_turns=1,
        )


register_executor("anthropic")(AnthropicExecutor.from_spec)
