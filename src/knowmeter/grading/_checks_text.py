"""Text assertions on the agent's final answer (fact layer).

All comparisons are on NFC-normalised text, so composed and decomposed accents match. Matching is
case-sensitive unless the type says otherwise (``icontains``) or the assertion sets
``ignore_case: true`` (full Unicode case folding). ``starts_with`` / ``ends_with`` / ``equals``
ignore surrounding whitespace. Lengths count user-perceived characters (an emoji with a skin tone
is one); word counts treat each Han / kana / Thai … character as a word.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from typing import Annotated, Any, ClassVar

from pydantic import AliasChoices, BeforeValidator, Field, field_validator, model_validator

from knowmeter.grading._registry import CheckContext, ListAssertion, Outcome, SyncAssertion, register
from knowmeter.grading._unicode import char_length, fold, word_tokens


def _as_text(v: object) -> object:
    # YAML turns `value: 17` into an int; a number to look for is its text
    return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


Text = Annotated[str, BeforeValidator(_as_text, json_schema_input_type=str | float)]
Count = Annotated[int, Field(ge=0)]


def clip(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message, shortened to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class _Matching(SyncAssertion):
    ignore_case: bool = False

    def _fold(self, text: str) -> str:
        return fold(text, ignore_case=self.ignore_case)


class _OneValue(_Matching):
    value: Text = Field(min_length=1)


class _ManyValues(_Matching, ListAssertion):
    values: list[Text] = Field(min_length=1)

    def _found(self, output: str) -> tuple[list[str], list[str]]:
        text = self._fold(output)
        found = [v for v in self.values if self._fold(v) in text]
        return found, [v for v in self.values if v not in found]


@register("contains")
class Contains(_OneValue):
    def check(self, ctx: CheckContext) -> Outcome:
        ok = self._fold(self.value) in self._fold(ctx.output)
        return Outcome(ok, f"{clip(self.value)} {'found' if ok else 'not found'} in the answer")


@register("not_contains")
class NotContains(_OneValue):
    def check(self, ctx: CheckContext) -> Outcome:
        found = self._fold(self.value) in self._fold(ctx.output)
        return Outcome(not found, f"{clip(self.value)} {'found' if found else 'not found'} in the answer")


@register("icontains")
class IContains(SyncAssertion):
    value: Text = Field(min_length=1)

    def check(self, ctx: CheckContext) -> Outcome:
        ok = fold(self.value, ignore_case=True) in fold(ctx.output, ignore_case=True)
        return Outcome(ok, f"{clip(self.value)} {'found' if ok else 'not found'} in the answer (any case)")


@register("contains_all")
class ContainsAll(_ManyValues):
    def check(self, ctx: CheckContext) -> Outcome:
        _, missing = self._found(ctx.output)
        if missing:
            return Outcome(
                False,
                f"missing {len(missing)} of {len(self.values)}: " + ", ".join(clip(m, 30) for m in missing),
                {"missing": missing},
            )
        return Outcome(True, f"all {len(self.values)} found")


@register("contains_any")
class ContainsAny(_ManyValues):
    def check(self, ctx: CheckContext) -> Outcome:
        found, _ = self._found(ctx.output)
        if found:
            return Outcome(True, f"found {clip(found[0], 30)}", {"found": found})
        return Outcome(False, f"none of {len(self.values)} found")


_REGEX_FLAGS = {
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "x": re.VERBOSE,
    "u": 0,
    "g": 0,
}  # u: Python patterns are always Unicode; g: a search is global anyway


@register("regex")
class Regex(SyncAssertion):
    pattern: str = Field(min_length=1, validation_alias=AliasChoices("pattern", "value"))
    flags: str = ""

    @model_validator(mode="after")
    def _compiles(self) -> Regex:
        self.compiled()
        return self

    def compiled(self) -> re.Pattern[str]:
        bits = 0
        for flag in self.flags:
            if flag not in _REGEX_FLAGS:
                raise ValueError(f"unknown regex flag {flag!r} (use any of: i m s x u g)")
            bits |= _REGEX_FLAGS[flag]
        try:
            return re.compile(fold(self.pattern, ignore_case=False), bits)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None

    def check(self, ctx: CheckContext) -> Outcome:
        match = self.compiled().search(fold(ctx.output, ignore_case=False))
        if match:
            return Outcome(True, f"/{self.pattern}/ matched {clip(match.group(0), 40)}")
        return Outcome(False, f"/{self.pattern}/ did not match")


@register("starts_with")
class StartsWith(_OneValue):
    def check(self, ctx: CheckContext) -> Outcome:
        ok = self._fold(ctx.output).lstrip().startswith(self._fold(self.value))
        return Outcome(ok, f"answer {'starts' if ok else 'does not start'} with {clip(self.value)}")


@register("ends_with")
class EndsWith(_OneValue):
    def check(self, ctx: CheckContext) -> Outcome:
        ok = self._fold(ctx.output).rstrip().endswith(self._fold(self.value))
        return Outcome(ok, f"answer {'ends' if ok else 'does not end'} with {clip(self.value)}")


class _Equality(_Matching):
    value: Text

    def _same(self, output: str) -> bool:
        return self._fold(output).strip() == self._fold(self.value).strip()


@register("equals")
class Equals(_Equality):
    def check(self, ctx: CheckContext) -> Outcome:
        ok = self._same(ctx.output)
        return Outcome(ok, f"answer {'equals' if ok else 'differs from'} {clip(self.value)}")


@register("not_equals")
class NotEquals(_Equality):
    def check(self, ctx: CheckContext) -> Outcome:
        same = self._same(ctx.output)
        return Outcome(not same, f"answer {'equals' if same else 'differs from'} {clip(self.value)}")


class _Bound(SyncAssertion):
    value: Count

    unit: ClassVar[str]
    at_least: ClassVar[bool] = True

    @abstractmethod
    def measure(self, output: str) -> int:
        """The measured size of the answer."""

    def check(self, ctx: CheckContext) -> Outcome:
        n = self.measure(ctx.output)
        ok = n >= self.value if self.at_least else n <= self.value
        op = ">=" if self.at_least else "<="
        return Outcome(ok, f"{n} {self.unit} ({'ok' if ok else 'fails'}: needs {op} {self.value})", {"actual": n})


class _Chars(_Bound):
    unit = "characters"

    def measure(self, output: str) -> int:
        return char_length(output.strip())


class _Words(_Bound):
    unit = "words"

    def measure(self, output: str) -> int:
        return len(word_tokens(output))


@register("min_length")
class MinLength(_Chars):
    pass


@register("max_length")
class MaxLength(_Chars):
    at_least = False


@register("word_count_min")
class WordCountMin(_Words):
    pass


@register("word_count_max")
class WordCountMax(_Words):
    at_least = False


_FENCE = re.compile(r"\A\s*```[\w-]*[ \t]*\n(.*?)\n[ \t]*```\s*\Z", re.DOTALL)


def parse_json_answer(output: str) -> tuple[Any, str]:
    """The answer parsed as JSON (also when it is exactly one fenced code block) and a note;
    raises ``ValueError`` with the parser's message."""
    try:
        return json.loads(output), "valid JSON"
    except json.JSONDecodeError as exc:
        fenced = _FENCE.match(output)
        if fenced is None:
            raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    try:
        return json.loads(fenced.group(1)), "valid JSON (inside a code fence)"
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON inside the code fence: {exc.msg} at line {exc.lineno}") from None


@register("json_valid")
class JsonValid(SyncAssertion):
    def check(self, ctx: CheckContext) -> Outcome:
        try:
            _, note = parse_json_answer(ctx.output)
        except ValueError as exc:
            return Outcome(False, str(exc))
        return Outcome(True, note)


@register("json_schema")
class JsonSchema(SyncAssertion):
    schema_: dict[str, Any] = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        import jsonschema  # only runs with json_schema assertions (slow to import)

        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        return schema

    def check(self, ctx: CheckContext) -> Outcome:
        try:
            data, _ = parse_json_answer(ctx.output)
        except ValueError as exc:
            return Outcome(False, str(exc))
        import jsonschema

        validator = jsonschema.validators.validator_for(self.schema_)(self.schema_)
        error = jsonschema.exceptions.best_match(validator.iter_errors(data))
        if error is None:
            return Outcome(True, "matches the schema")
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return Outcome(False, f"schema violation at {path}: {error.message[:200]}")
