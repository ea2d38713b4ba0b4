"""The research's transfer checks on an eval case, by shared n-grams with the skill's text:

* ``far-transfer`` (§7.4 R4): a ``transfer: far`` prompt sharing a 4-gram with the body was lifted
  from it — it measures near transfer;
* ``c2-scenario`` (§5.3, criterion 4): C2 is the far-transfer test, so a C2 scenario the body
  already enumerates (a shared 4-gram), or a C2 case tagged ``transfer: near``, measures retrieval;
* ``analogy-drift`` (``FORMATS.md`` §1.5): a C6 case (prompt, reasoning, behaviors) sharing no
  word pair with the skill's current analogy probes an analogy the skill no longer has.

Tokens are the grader's verbatim check's (research A.3: lower-case, non-alphanumerics as spaces,
tokens of ≤ 3 characters and the stopwords dropped), so lint and grader agree on what a token is.
"""

from __future__ import annotations

from knowmeter.skillgraph._cases import CaseFile, ComprehensionCase
from knowmeter.skillgraph._dimension import Dimension
from knowmeter.skillgraph._finding import Finding
from knowmeter.skillgraph._skill import Skill
from knowmeter.skillgraph._verbatim import SourceGrams

FAR_TRANSFER_N = 4  # R4: "any 4-gram or longer overlap with the body"
ANALOGY_N = 2


def shared_ngrams(text: str, source: str, n: int) -> list[str]:
    """The ``n``-grams of ``text`` also in ``source`` (A.3 tokens), each once, in order."""
    return list(SourceGrams([source], n).check(text).ngrams)


def transfer_findings(cases: CaseFile, case: ComprehensionCase, skill: Skill) -> list[Finding]:
    """``far-transfer`` / ``c2-scenario`` / ``analogy-drift`` for one case."""
    out: list[Finding] = []
    checks_body = case.dimension is Dimension.C2 or case.transfer == "far"
    shared = shared_ngrams(case.prompt, skill.body, FAR_TRANSFER_N) if checks_body else []
    if case.dimension is Dimension.C2 and case.transfer == "near":
        out.append(
            Finding(
                cases.path,
                case.line,
                "c2-scenario",
                "C2 is the far-transfer test (research §5.3) but the case is tagged transfer: near; "
                "give it a scenario the body does not enumerate",
                case.id,
            )
        )
    elif case.dimension is Dimension.C2 and shared:
        out.append(
            Finding(
                cases.path,
                case.line,
                "c2-scenario",
                f"the body already enumerates this C2 scenario (shared 4-grams: {_show(shared)}); "
                "use surface details the body does not have (research §5.3)",
                case.id,
            )
        )
    elif shared:
        out.append(
            Finding(
                cases.path,
                case.line,
                "far-transfer",
                f"tagged transfer: far but the prompt shares {_show(shared)} with the body; "
                "re-tag it near or change the scenario (R4)",
                case.id,
            )
        )
    analogy = skill.concept_text("analogy")
    if (case.dimension is Dimension.C6 or case.concept_field == "analogy") and analogy is not None:
        probe = " ".join([case.prompt, case.expected_reasoning or "", *(b.text for b in case.expected_behaviors)])
        if not shared_ngrams(probe, analogy, ANALOGY_N):
            out.append(
                Finding(
                    cases.path,
                    case.line,
                    "analogy-drift",
                    f"the case shares no word pair with the skill's analogy ({_clip(analogy)}); "
                    "the analogy changed since the case was written — rewrite the case",
                    case.id,
                )
            )
    return out


def _show(grams: list[str], most: int = 3) -> str:
    more = f" and {len(grams) - most} more" if len(grams) > most else ""
    return ", ".join(f"'{g}'" for g in grams[:most]) + more


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 1] + "…")
