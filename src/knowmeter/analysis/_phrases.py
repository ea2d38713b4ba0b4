"""Text gap signals in the agent's own words: explicit markers (spec §4.2) and the regex recall
stage of hedging (spec §4.3).

Only prose counts: code (fenced or inline), quoted spans, blockquotes and markdown tables are
skipped (see ``_text.excluded_spans``). Hedging is sentence-level: one candidate per sentence,
with the sentences around it as the window a classifier sees. The phrase sets cover English,
Chinese and Japanese; a sentence containing kana is Japanese (Chinese phrases are not matched
there: the same characters mean other things, ``実行可能``), one without is not (Japanese
phrases need kana around them). There are two recall nets: *strict* (alone, in regex-only mode)
and *broad* (strict + softer phrasing such as "may be", "I think", "也许", "でしょう"), meant for
when an LLM second pass filters the candidates. ``bench/bench_hedging_labels.py`` measures both
on a hand-labelled set of real agent messages.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from knowmeter.analysis._model import GapSignal
from knowmeter.analysis._text import ProseMask, Sentence, clip, sentences

MARKER_PATTERN = re.compile(r"【推断】|【知识缺口】|【未知】|\[inferred\]|\[unknown\]|\[knowledge[ _-]?gap\]", re.I)

#: Strict recall (used alone in regex-only mode): the spec's examples and phrases that say the
#: agent does not know, could not find, or has to guess.
HEDGING_ZH: tuple[str, ...] = (
    "不确定",
    "不太确定",
    "无法确定",
    "无法确认",
    "不能确认",
    "没法确认",
    "没有足够信息",
    "没有足够的信息",
    "信息不足",
    "缺少相关信息",
    "缺乏信息",
    "需要查证",
    "需要核实",
    "需要进一步确认",
    "需要确认",
    "有待确认",
    "有待核实",
    "猜测",
    "推测",
    "不清楚",
    "不太清楚",
    "不知道",
    "没有找到",
    "未找到",
    "找不到",
    "据我所知",
)
HEDGING_EN: tuple[str, ...] = (
    r"I'?m not (?:sure|certain)",
    r"I am not (?:sure|certain)",
    r"I'?m unsure",
    r"not (?:entirely |completely |fully |quite )?sure (?:whether|if|which|what|how|where|why|about|that)",
    r"insufficient (?:information|data|context)",
    r"not enough (?:information|data|context)",
    r"I (?:would |'d )?need to (?:verify|double-check|confirm)",
    r"I (?:cannot|can't|could not|couldn't|was unable to|am unable to) (?:confirm|verify|determine|find|locate|tell)",
    r"I (?:don't|do not) know",
    r"I (?:don't|do not) have (?:enough|sufficient|specific|the) (?:information|details|context)",
    r"presumably",
    r"as far as I (?:know|can tell)",
    r"to (?:the best of )?my knowledge",
    r"(?:my )?best guess",
    r"I'?m guessing",
    r"if I recall",
)
#: Japanese, strict: a conjecture about a present, checkable state ("使用されていない可能性がある",
#: "実行されている可能性が高い", "箇所があるかもしれません") and first-person "cannot see / do not
#: know" ("追加要求が見えない", "わかりません"). The verb before the conjecture must be stative
#: (ている / ない / がある / である …): "発生する可能性がある", "FAILとなる可能性" are risks and
#: forecasts, "実現可能性が高い" a compound noun — none of them doubt a fact.
HEDGING_JA_STRICT = (
    r"(?:てい(?:る|ない|た)|でい(?:る|ない)|てある|ておらず|(?:が|も|は)(?:ある|ない)|である|ではない|済み)"
    r"(?:可能性(?:が|も)(?:あ|高)|かもしれ|と思われ)"
    r"|(?:が|は)見えな[いく]|(?:わか|分か)(?:りません|らない)"
)
#: Broad recall, added only when an LLM second pass will filter it: softer phrasing that is as
#: often polite or speculative as it is knowledge-level uncertainty.
#: Japanese (broad): estimates, expectations, conjecture and what could not be found out
#: ("推定90%", "100%カバー見込み", "未取得", "かもしれません", "確認できませんでした").
HEDGING_JA: tuple[str, ...] = (
    "推定",
    "見込み",
    "見込",
    "かもしれ",
    "と思われ",
    "と考えられ",
    "おそらく",
    "恐らく",
    "可能性があ",
    "可能性が高",
    "未確認",
    "未検証",
    "未取得",
    "不明",
    "わかりません",
    "分かりません",
    "わからない",
    "分からない",
    "確認できません",
    "確認できなかった",
    "確認できていない",
    "不確か",
)
HEDGING_ZH_BROAD: tuple[str, ...] = (
    "可能是",
    "很可能",
    "也许",
    "或许",
    "大概",
    "似乎",
    "好像",
    "估计",
    "应该是",
    "看起来",
)
HEDGING_JA_BROAD: tuple[str, ...] = (
    "でしょう",
    "だろう",
    "ようです",
    "ようだ",
    "みたい",
    "らしい",
    "と思い",
    "と思う",
    "気がします",
    "たぶん",
    "多分",
)
HEDGING_EN_BROAD: tuple[str, ...] = (
    # the spec's "likely" and modal hedges: as often a debugging hypothesis or a review's remark
    # as knowledge-level uncertainty, so only a classifier can tell
    r"not (?:entirely |completely |fully )?sure",
    r"not certain",
    r"uncertain",
    r"unsure",
    r"lack(?:s|ing)? (?:of )?(?:information|documentation|details)",
    r"need(?:s|ed)? to (?:be )?(?:verif(?:y|ied)|double-check(?:ed)?|confirm(?:ed)?)",
    r"needs? verification",
    r"should be (?:verified|confirmed|double-checked)",
    r"(?:cannot|can't|could not|couldn't|unable to) (?:confirm|verify|determine|find|locate|tell)",
    r"no (?:information|documentation|docs) (?:about|on|for)",
    r"not documented",
    r"undocumented",
    r"(?:it'?s |it is |remains )?unclear",
    r"likely",
    r"probably",
    r"maybe",
    r"might(?: not)?(?= (?!want|like|help|be (?:relevant|useful|helpful|worth|interesting|needed)))",
    r"there (?:might|may|could) be",
    r"(?:this|that|it) could mean",
    r"(?:not|never) (?:been |yet )?(?:verified|confirmed|measured)",
    r"unverified",
    r"unconfirmed",
    r"perhaps",
    r"possibly",
    r"might be",
    r"may be",
    r"could be",
    r"I (?:think|believe|guess|suspect)",  # not "I assume": a stated premise, not doubt
    r"it (?:seems|appears)",
    r"seems to",
    r"appears to",
)


def _literal(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """Chinese or Japanese phrases as one regex, longest first."""
    return re.compile("|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True)))


def _group_end(phrase: str, start: int) -> int:
    """Index of the ``)`` that closes the group opening at ``start``."""
    depth = 0
    for i in range(start, len(phrase)):
        depth += phrase[i] == "("
        depth -= phrase[i] == ")"
        if depth == 0:
            return i
    raise ValueError(f"unbalanced group in hedging phrase {phrase!r}")


def _top_alternatives(body: str) -> list[str]:
    """The ``|``-separated alternatives of a group's body (not those of nested groups)."""
    out: list[str] = []
    depth = begin = 0
    for i, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            out.append(body[begin:i])
            begin = i + 1
    return [*out, body[begin:]]


def _by_first_letter(phrase: str) -> list[str] | None:
    """``phrase`` as alternatives that each start with a literal letter, in the order the regex
    engine tries them (a leading ``(?:a|b)`` group becomes ``a…``, ``b…``; an optional one
    ``(?:x )?y`` becomes ``x y``, ``y``), or None when a phrase starts some other way."""
    if phrase.startswith("(?:"):
        end = _group_end(phrase, 0)
        optional = phrase[end + 1 : end + 2] == "?"
        rest = phrase[end + 1 + optional :]
        parts = [_by_first_letter(alt + rest) for alt in _top_alternatives(phrase[3:end])]
        if optional:
            parts.append(_by_first_letter(rest))
        return None if None in parts else [a for part in parts if part for a in part]
    if not phrase[:1].isalpha() or phrase[1:2] in ("?", "*", "{"):
        return None
    return [phrase]


@dataclass(frozen=True, slots=True)
class _EnglishNet:
    """The English phrases as one regex over *lower-cased* text (see design/decisions.md, speed
    tricks), one branch per first letter; and the same phrases case-insensitively, for the rare
    text whose lower-cased form changes length (compiled on first use, through ``re``'s cache)."""

    lowered: re.Pattern[str]
    any_case: str

    def finditer(self, text: str) -> list[re.Match[str]]:
        low = text.lower()
        if len(low) != len(text):  # e.g. "İ" lower-cases to two characters: offsets would drift
            return list(re.compile(self.any_case, re.I).finditer(text))
        return list(self.lowered.finditer(low))


def _en(phrases: tuple[str, ...]) -> _EnglishNet:
    if any("\\" in p for p in phrases):
        raise ValueError("English hedging phrases must not contain escapes (they are lower-cased)")
    lowered = tuple(p.lower() for p in phrases)
    any_case = r"\b(?:" + "|".join(phrases) + r")\b"
    expanded = [_by_first_letter(p) for p in lowered]
    if None in expanded:  # cannot dispatch on the first letter: the plain alternation
        return _EnglishNet(re.compile(r"\b(?:" + "|".join(lowered) + r")\b"), any_case)
    # One branch per first letter, its alternatives in their original order: the engine tries
    # only the branch of the letter it sees (an alternation of 40 phrases tries them all), and
    # at any position it picks the same phrase as the plain alternation would.
    groups: dict[str, list[str]] = {}
    for alternative in (a for alts in expanded if alts for a in alts):
        groups.setdefault(alternative[0], []).append(alternative[1:])
    branches = "|".join(re.escape(c) + "(?:" + "|".join(rest) + ")" for c, rest in groups.items())
    return _EnglishNet(re.compile(r"(?=[" + "".join(sorted(groups)) + r"])\b(?:" + branches + r")\b"), any_case)


@functools.cache
def _recall(broad: bool) -> tuple[_EnglishNet, re.Pattern[str], re.Pattern[str]]:
    """The strict or the broad net (English, Chinese, Japanese), compiled on first use: big
    alternations take milliseconds to compile, and most runs never use the broad one."""
    if broad:
        return (
            _en(HEDGING_EN + HEDGING_EN_BROAD),
            _literal(HEDGING_ZH + HEDGING_ZH_BROAD),
            _literal(HEDGING_JA + HEDGING_JA_BROAD),
        )
    return _en(HEDGING_EN), _literal(HEDGING_ZH), re.compile(HEDGING_JA_STRICT)


_KANA = re.compile(r"[\u3040-\u30ff]")

#: Sentences the strict net never counts (regex-only mode), whatever phrase they hold: debugging
#: hypotheses about a failure ("maybe the test fails because…", "原因は…かもしれない"), remarks on
#: a document under review and its risks or future ("設計書に記載されているが…", "将来…可能性",
#: "**現状**: …"), and conditionals ("…の場合"). The classifier (broad net) sees them all.
_NOT_KNOWLEDGE_DOUBT = re.compile(
    r"原因|エラー|失敗|不具合|バグ|記載|明記|記述|言及|設計書|計画書|要件定義|ドキュメント|レポート|将来|今後|リスク|場合"
    r"|(?:現状|提案|効果|理由|影響|問題|対策|懸念点?|改善の余地)\**\s*[:：]"
    r"|\b(?:fail(?:s|ed|ing|ure)?|error|bug|crash(?:es|ed)?|exception|traceback|because"
    r"|the (?:document|design|plan|spec|specification|report|proposal|requirements|pull request|PR))\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class AgentText:
    """One message of the agent's own words, with the turn it was said in."""

    text: str
    turn: int


def _prose(msg: AgentText) -> tuple[ProseMask, list[Sentence]]:
    return ProseMask(msg.text), sentences(msg.text)


def marker_signals(messages: list[AgentText], *, sample_id: str) -> list[GapSignal]:
    """One signal per explicit marker in prose (identical marker + sentence counted once)."""
    out: dict[tuple[str, str], GapSignal] = {}
    for msg in messages:
        if MARKER_PATTERN.search(msg.text) is None:
            continue
        mask, sents = _prose(msg)
        for m in MARKER_PATTERN.finditer(msg.text):
            if mask.hides(m.start(), m.end()):
                continue
            sent = next((s.text for s in sents if s.start <= m.start() < s.end), m.group(0))
            key = (m.group(0).lower(), sent)
            if key not in out:
                out[key] = GapSignal(
                    sample_id=sample_id,
                    turn=msg.turn,
                    source="explicit_marker",
                    target=m.group(0),
                    context=clip(sent, 300),
                )
    return list(out.values())


def _hedges(msg: AgentText, broad: bool) -> tuple[list[Sentence], dict[int, dict[str, tuple[int, str]]]]:
    """The message's sentences and, by sentence index, the first hedging phrase of each language
    (``en``, ``zh``, ``ja``) in its prose: ``{lang: (offset, phrase)}``."""
    en, zh, ja = _recall(broad)
    found = (
        [(m, "en") for m in en.finditer(msg.text)]
        + [(m, "zh") for m in zh.finditer(msg.text)]
        + [(m, "ja") for m in ja.finditer(msg.text)]
    )
    if not found:
        return [], {}
    mask, sents = _prose(msg)
    starts = [s.start for s in sents]
    first: dict[int, dict[str, tuple[int, str]]] = {}
    for m, lang in found:
        i = bisect.bisect_right(starts, m.start()) - 1
        if i < 0 or m.end() > sents[i].end or mask.hides(m.start(), m.end()):
            continue
        if lang != "en" and (lang == "ja") != bool(_KANA.search(sents[i].text)):
            continue  # a Chinese phrase in Japanese (other meanings), or a Japanese one outside it
        if not broad and _NOT_KNOWLEDGE_DOUBT.search(sents[i].text):
            continue
        by_lang = first.setdefault(i, {})
        if lang not in by_lang or m.start() < by_lang[lang][0]:
            by_lang[lang] = (m.start(), msg.text[m.start() : m.end()])  # as written (the match may be lower-cased)
    return sents, first


#: Languages whose strict regex alone is trusted (regex-only mode). The Japanese strict net
#: (``HEDGING_JA_STRICT``, designed on the dev split of the corpus labels) found all 3 dev hedges
#: with no false alarm but 0 of the 2 held-out ones (one sits in a review's "現状:" line, one is a
#: "…ようです" the net leaves out): not shown to hold, so without a classifier its candidates are
#: not counted, only said (``bench/bench_gap_labels.py`` prints its figures apart). The Chinese
#: strict net is the spec's first-person phrases only (its modal "可能是" went to the broad net,
#: like "likely").
REGEX_LANGUAGES = frozenset({"en", "zh"})


def hedging_scan(
    messages: list[AgentText], *, sample_id: str, broad: bool = False, languages: frozenset[str] = REGEX_LANGUAGES
) -> tuple[list[GapSignal], int]:
    """Regex recall: one hedging candidate per prose sentence with a hedging phrase (a sentence
    repeated verbatim is one candidate). ``context`` holds the sentence, ``window`` the
    sentence with its neighbours. ``broad`` adds the soft phrases and judges every language (for
    an LLM second pass); without it a sentence whose only phrases are in a language outside
    ``languages`` is no signal but is counted: the second value, the candidates the regex left
    unjudged (a benchmark passes ``languages`` to score a net that is not trusted alone)."""
    out: dict[str, GapSignal] = {}
    unjudged = 0
    for msg in messages:
        sents, found = _hedges(msg, broad)
        for i in sorted(found):
            usable = [v for lang, v in found[i].items() if broad or lang in languages]
            if not usable:
                unjudged += 1
                continue
            s = sents[i]
            if s.text in out:
                continue
            window = " ".join(x.text for x in sents[max(0, i - 1) : i + 2])
            out[s.text] = GapSignal(
                sample_id=sample_id,
                turn=msg.turn,
                source="hedging",
                target=min(usable)[1],
                context=clip(s.text, 500),
                window=clip(window, 900),
            )
    return list(out.values()), unjudged


def hedging_signals(messages: list[AgentText], *, sample_id: str, broad: bool = False) -> list[GapSignal]:
    """The hedging candidates of ``hedging_scan`` (without the unjudged count)."""
    return hedging_scan(messages, sample_id=sample_id, broad=broad)[0]
