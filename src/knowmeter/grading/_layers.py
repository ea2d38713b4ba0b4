"""Which layer each assertion type scores in, and the layered-score formulas.

Layers (composite-score spec §1–§3):

- **fact** — *what the answer says*: is it right, complete, well-formed, close to a reference?
  The text checks, similarity to a reference and the judge-backed content metrics. Length and
  format checks are here because they constrain the answer itself ("≤ 25 characters", "valid
  JSON"), not how the agent worked.
- **behavior** — *how the agent got there*: which tools it called and with what, how many turns
  it took and what the run cost.
- ``custom`` scores in **fact** unless the assertion says ``layer: behavior``; an ``assert-set``
  scores in the layer of its members (a set mixing layers must say ``layer:``).

Each type's layer is declared once, in ``knowmeter.grading._catalog`` (``knowmeter docs
assertions`` lists them).

(omk files the two differently — it puts e.g. ``starts_with`` in behavior and
``tool_output_contains`` in fact; knowmeter follows the rule above, so the split is predictable.)

Scores: ``fact = 1 + 4 · passed_weight / total_weight`` over the fact assertions that were
evaluated (an assertion that could not be evaluated — a judge-backed one with no judge — is left
out of both sums), ``behavior`` likewise, ``judge`` is the judge's score; a layer with nothing to
score is missing (``None``), never 0. ``composite`` is the mean of the layers present, and
``layers_used`` names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from knowmeter import defaults


class Layer(StrEnum):
    FACT = "fact"
    BEHAVIOR = "behavior"


def ratio_score(passed_weight: float, total_weight: float) -> float | None:
    """``1 + 4 · passed / total``, or None when there is no weight to score."""
    if total_weight <= 0:
        return None
    return 1.0 + 4.0 * passed_weight / total_weight


def assertion_layer_score(items: Iterable[tuple[str, float, bool | None]], layer: str) -> float | None:
    """Score of one assertion layer from ``(layer, weight, passed)`` triples; ``passed`` None
    (not evaluated) is left out."""
    total = passed = 0.0
    for item_layer, weight, ok in items:
        if item_layer != layer or ok is None:
            continue
        total += weight
        if ok:
            passed += weight
    return ratio_score(passed, total)


def composite_score(layers: Mapping[str, float | None]) -> tuple[float | None, list[defaults.LayerName]]:
    """Mean of the layers present and their names (in canonical order)."""
    used = [name for name in defaults.LAYERS if layers.get(name) is not None]
    if not used:
        return None, []
    return sum(float(layers[name] or 0.0) for name in used) / len(used), used
