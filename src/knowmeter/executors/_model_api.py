"""What the single-turn model-API executors (``openai``, ``anthropic``) share: options, the
executor's model / options / identity and its construction from a spec, importing the SDK with an
install hint, the trace of one exchange, and which API failures are retried."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import ClassVar, Generic, Self, TypeVar

from pydantic import Field

from knowmeter.errors import InputError
from knowmeter.executors._options import ExecutorOptions, options_hash, parse_options
from knowmeter.executors._protocol import ExecResult, Executor, ExecutorError, ExecutorUnavailable
from knowmeter.executors._registry import ExecutorSpec
from knowmeter.traces import Event, MessageEvent, Trace


class ApiOptions(ExecutorOptions):
    """Options of a model-API executor."""

    #: an API-compatible endpoint (OpenAI: with ``/v1``; Anthropic: without)
    base_url: str | None = None
    #: default: the SDK's environment variable (OPENAI_API_KEY / ANTHROPIC_API_KEY)
    api_key: str | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0)
    #: per-request timeout of the SDK (the task's timeout also applies)
    timeout_s: float | None = Field(default=None, gt=0)
    #: the SDK's own retries of connection errors, 408/409/429 and 5xx
    max_retries: int = Field(default=2, ge=0)


OptionsT = TypeVar("OptionsT", bound=ApiOptions)


class ApiExecutor(Executor, Generic[OptionsT]):
    """Base of a single-turn model-API executor: subclasses name the executor, its options class,
    its SDK module, the install hint and the API key's environment variable, and implement ``run``."""

    name: str
    non_llm = False
    workspace_leak_allowed = True  # a model API reads no workspace
    options_type: ClassVar[type[ApiOptions]]
    sdk: ClassVar[str]
    install_hint: ClassVar[str]
    key_env: ClassVar[str]

    def __init__(self, model: str, options: OptionsT) -> None:
        self.model = model
        self.options = options

    def identity(self) -> str:
        return f"{self.name}:{self.model}:{options_hash(self.options)}"

    @classmethod
    def from_spec(cls, spec: ExecutorSpec) -> Self:
        """Validate the options, check the SDK is installed and a key is set, require a model."""
        options = parse_options(cls.options_type, cls.name, spec.options)
        import_sdk(cls.sdk, cls.install_hint)
        api_key(cls.name, options, cls.key_env)
        return cls(require_model(spec), options)  # type: ignore[arg-type]


def import_sdk(module: str, install_hint: str) -> ModuleType:
    """Import an optional SDK or raise ExecutorUnavailable with the one-line install hint."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExecutorUnavailable(f"the {module} SDK is not installed; {install_hint}") from None


def api_key(executor: str, options: ApiOptions, env_var: str) -> str:
    """The API key: the option, else ``env_var``; a server given by ``base_url`` may need none."""
    key = options.api_key or os.environ.get(env_var) or ("unused" if options.base_url else None)
    if key is None:
        raise InputError(f"executor {executor!r}: no API key: set {env_var} or the executor option api_key")
    return key


def require_model(spec: ExecutorSpec) -> str:
    """The spec's model; these executors cannot pick one for the user."""
    if not spec.model:
        raise InputError(
            f"executor {spec.name!r} needs a model: pass --model NAME or set "
            f"executor: {{name: {spec.name}, model: NAME}} in eval.yaml"
        )
    return spec.model


def exchange_trace(source: str, prompt: str, output: str, model: str) -> Trace:
    """The trace of one single-turn exchange: the user's prompt and the model's answer."""
    events: list[Event] = [MessageEvent("user", prompt, 0)]
    if output:
        events.append(MessageEvent("assistant", output, 1))
    return Trace(events=events, source=source, meta={"model": model})


def is_retryable_status(status: int) -> bool:
    """Statuses worth retrying the task for: timeouts, conflicts, rate limits, server errors."""
    return status in (408, 409, 429) or status >= 500


def api_error_result(name: str, status: int, message: str, prompt: str, model: str) -> ExecResult:
    """A failed call: raise ExecutorError when a retry may help, else an error result."""
    error = f"{name}: API error {status}: {message}"
    if is_retryable_status(status):
        raise ExecutorError(error)
    return ExecResult("", exchange_trace(name, prompt, "", model), error=error)
