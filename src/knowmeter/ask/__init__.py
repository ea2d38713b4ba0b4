"""One way to ask a model for structured JSON (judges, the hedging classifier, sample drafting,
the comprehension grader): prompts with untrusted text fenced as data (``PromptTemplate``), one
request → validated-reply path with one retry policy (``ask_json``), replies read by a pydantic
model (``json_reply``), cost per attempt, and an optional reply cache."""

from knowmeter.ask._ask import Asked, CallSite, ReplyCache, ask_json, cache_key, cached, sum_costs, unusable_reply
from knowmeter.ask._fence import PromptTemplate, data_nonce, fence
from knowmeter.ask._reply import ReplyRejected, json_objects, json_reply, snippet

__all__ = [
    "Asked",
    "CallSite",
    "PromptTemplate",
    "ReplyCache",
    "ReplyRejected",
    "ask_json",
    "cache_key",
    "cached",
    "data_nonce",
    "fence",
    "json_objects",
    "json_reply",
    "snippet",
    "sum_costs",
    "unusable_reply",
]
