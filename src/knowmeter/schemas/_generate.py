"""The JSON Schemas of ``eval.yaml`` and of sample files, generated from the models that load them
(``EvalFile``; ``Sample`` and every registered assertion type), so an editor flags what the loader
would refuse. What pydantic's own schema leaves out is added here from the same models: a key's
other names (``AliasChoices``: ``value`` for a regex's ``pattern``), ``value`` for a list
assertion's ``values``, and the assertion types as one union keyed by ``type`` (``assert-set``
members included). Python-side names of aliased keys (``negate`` for ``not``) are not offered.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, TypeAdapter

from knowmeter.config import EvalFile
from knowmeter.grading import Assertion, ListAssertion, assertion_class, assertion_types
from knowmeter.samples import Sample

DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: where the union of assertion types lives in the sample-file schema
ASSERTION_REF = "#/$defs/Assertion"


def eval_schema() -> dict[str, Any]:
    """The JSON Schema of ``eval.yaml`` (unknown keys are refused, as the loader refuses them)."""
    schema = EvalFile.model_json_schema(mode="validation")
    return {
        "$schema": DRAFT,
        **schema,
        "title": "knowmeter eval.yaml",
        "description": "The run's settings (omk's keys plus knowmeter's own); command-line flags override them.",
    }


def _def_name(type_name: str) -> str:
    return f"assertion:{type_name}"


def _alternative_keys(cls: type[Assertion], schema: dict[str, Any]) -> None:
    """Offer every name a key is accepted under; a required key may be given under any of them."""
    props: dict[str, Any] = schema["properties"]
    required: list[str] = schema.get("required", [])
    alternatives: list[list[str]] = []
    for name, field in cls.model_fields.items():
        alias = field.validation_alias
        names = [c for c in alias.choices if isinstance(c, str)] if isinstance(alias, AliasChoices) else []
        if name == "values" and issubclass(cls, ListAssertion):  # `value: x` or `value: [x, y]`
            values = props["values"]
            props["value"] = {"anyOf": [values["items"], values]}
            names = ["values", "value"]
        if not names:
            continue
        for other in names[1:]:
            props.setdefault(other, props[names[0]])
        if names[0] in required:
            required.remove(names[0])
            alternatives.append(names)
    if alternatives:
        schema["allOf"] = [{"anyOf": [{"required": [n]} for n in names]} for names in alternatives]


def _assertion_schema(name: str, defs: dict[str, Any]) -> dict[str, Any]:
    cls = assertion_class(name)
    assert cls is not None, name
    schema = cls.model_json_schema(mode="validation", by_alias=True, ref_template="#/$defs/{model}")
    for key, sub in schema.pop("$defs", {}).items():
        if key != Assertion.__name__:  # the members of an assert-set: the union, below
            defs.setdefault(key, sub)
    schema["properties"]["type"] = {"const": name}
    if "assertions" in schema["properties"]:
        schema["properties"]["assertions"] = {"type": "array", "minItems": 1, "items": {"$ref": ASSERTION_REF}}
    _alternative_keys(cls, schema)
    schema["title"] = name
    return schema


def samples_schema() -> dict[str, Any]:
    """The JSON Schema of a sample file (YAML or JSON: a list of samples, or a mapping with
    ``samples``); each line of a JSONL file is one ``#/$defs/Sample``."""
    sample = TypeAdapter(Sample).json_schema(mode="validation", by_alias=True, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = sample.pop("$defs", {})
    sample["properties"]["assertions"] = {"type": "array", "items": {"$ref": ASSERTION_REF}}
    sample["description"] = (
        "One eval case (omk's eval-sample fields, and what knowmeter writes); other keys are refused: "
        "put your own under metadata."
    )
    names = list(assertion_types())
    for name in names:
        defs[_def_name(name)] = _assertion_schema(name, defs)
    defs["Assertion"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": names}},
        "allOf": [
            {
                "if": {"properties": {"type": {"const": n}}, "required": ["type"]},
                "then": {"$ref": f"#/$defs/{_def_name(n)}"},
            }
            for n in names
        ],
    }
    defs["Sample"] = sample
    samples = {"type": "array", "items": {"$ref": "#/$defs/Sample"}}
    return {
        "$schema": DRAFT,
        "title": "knowmeter sample file",
        "description": "A list of samples, or a mapping whose 'samples' holds them (other keys are ignored). "
        "Each line of a .jsonl file is one #/$defs/Sample.",
        "anyOf": [
            samples,
            {
                "type": "object",
                "required": ["samples"],
                "properties": {"$schema": {"type": "string"}, "samples": samples, "requires": {"type": "object"}},
            },
        ],
        "$defs": dict(sorted(defs.items())),
    }
