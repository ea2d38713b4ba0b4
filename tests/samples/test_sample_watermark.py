"""The sample-set watermark is the same as it always was (its hashes below were computed by the
loader before it streamed), and loading streams: each record is dropped once validated, the
hash is fed one sample at a time, and a loaded sample is compact."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.samples import Sample, load_samples, sample_set_hash

#: Sample files in every format, with what makes canonical JSON tricky: non-ASCII text (escaped
#: and raw), a numeric id, explicit nulls and defaults, nested metadata with floats / big ints /
#: nulls, a YAML alias and date, folded and literal blocks, U+2028 inside a string, CRLF and a BOM.
FILES = {
    "mixed.jsonl": (
        '{"sample_id": "ja-1", "prompt": "\\u65e5\\u672c\\u8a9e\\u306e\\u8cea\\u554f\\u3067\\u3059\\u3002'
        '\\ud83d\\ude80", "context": "\\u00dcn\\u00efc\\u00f6d\\u00e9\\u2028sep", "assertions": '
        '[{"type": "contains", "value": "\\u7b54\\u3048", "weight": 0.5}]}\n'
        "\n"
        '{"prompt": "numeric id", "sample_id": 42, "difficulty": "hard", "construct": "recall", '
        '"capability": ["a", "b"], "assertions": [], "context": null, "metadata": {"z": [1, 2.5, 1e-07, '
        'true, null, {"ß": "é"}], "a": {"deep": {"deeper": [[]]}}, "n": 12345678901234567890}}\r\n'
        '{"sample_id": "tools", "prompt": "p\\nmulti\\tline \\"quoted\\" \\\\ back", "allowedTools": '
        '["Read"], "tripwire": false, "mocks": [{"tool": "Bash", "output": "x"}], "tags": ["t1"], '
        '"dimensions": {"acc": "be right"}, "probe": {"generator": "g", "prompt_hash": "h"}}\n'
    ),
    "array.json": json.dumps(
        [
            {
                "sample_id": "a1",
                "prompt": "Zürich — “quotes” ‘single’",
                "rubric": "score 1-5",
                "environment": {"FOO": "bar", "N": 1},
            },
            {
                "sample_id": "a2",
                "prompt": "line\u2028sep emoji 👩\u200d👩\u200d👧 and \u0000 nul? no: \u0007 bell",
                "assertions": [{"type": "regex", "pattern": "^a.*$"}],
                "provenance": "probe",
                "draft": True,
            },
        ],
        indent=2,
        ensure_ascii=False,
    ),
    "wrapped.json": json.dumps(
        {
            "requires": {"knowmeter": ">=0.1"},
            "samples": [
                {
                    "sample_id": "w1",
                    "prompt": "wrapped",
                    "comprehension": {"dimension": "C1", "n": 3, "weights": [0.1, 0.2]},
                    "truth_sources": ["SKILL.md"],
                    "gap": {"target": "x"},
                    "refined_by": "m",
                    "refine_error": "e",
                }
            ],
        }
    ),
    "samples.yaml": (
        "requires: {knowmeter: '>=0.1'}\n"
        "samples:\n"
        "  - sample_id: y1\n"
        "    prompt: |\n      複数行の\n      プロンプト\n"
        "    metadata: &m\n      when: 2024-01-02\n      ratio: 0.1\n      list: [1, two, 3.0, null, ~]\n"
        "      nested: {k: {v: [x, {y: z}]}}\n"
        "    assertions:\n      - {type: contains, value: 'ok'}\n"
        "  - sample_id: 7\n"
        "    prompt: >\n      folded\n      text ☃\n"
        "    metadata: *m\n"
        "    expectedTools: [Grep]\n    mocksStrict: true\n"
        "    capability: search\n    difficulty: easy\n"
    ),
    "bom.jsonl": '\ufeff{"sample_id": "b1", "prompt": "after a byte-order mark"}\n',
}

#: sha256 of each file's samples, as the loader computed it before loading streamed
RECORDED = {
    "mixed.jsonl": "7e9733262c516ff654758610445b9b337c457ce17c04e6949777ae84208a4d9d",
    "array.json": "7cb6388fa6affafa0dea2e643ec05a3ae8ae9385e71b60d92fe1fbdf8a4d5a52",
    "wrapped.json": "56c054e88f69f8b5d67ea0630dbc492576fd0b8f37700cef7f9811ebf7a59032",
    "samples.yaml": "31670a5e46972b0920a7921dd085a68684b5bb87e20ea8006287e444115c3de3",
    "bom.jsonl": "ee2b15ed596fae9498871687533319d1bffeba9bcada4e57bedc393f171d4e35",
}
ALL_FILES = "a112c016bd171f5417b8afec7e384743759aece95bba36daca18d2a58db61094"  # the five, in that order
FIRST_THREE = "7e9733262c516ff654758610445b9b337c457ce17c04e6949777ae84208a4d9d"  # = mixed.jsonl's three
NO_SAMPLES = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"  # sha256(b"[]")


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    paths = []
    for name, text in FILES.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def test_each_files_watermark_is_the_one_recorded_before_loading_streamed(files: list[Path]) -> None:
    for path in files:
        assert load_samples(path).watermark.sha256 == RECORDED[path.name], path.name


def test_several_files_subsets_and_no_samples_hash_as_recorded(files: list[Path]) -> None:
    whole = load_samples(files)
    assert (whole.watermark.count, whole.watermark.sha256) == (9, ALL_FILES)
    assert sample_set_hash(whole.samples[:3]).hexdigest() == FIRST_THREE
    assert sample_set_hash([]).hexdigest() == NO_SAMPLES


def test_the_custom_assertion_payload_keeps_every_key(files: list[Path]) -> None:
    """A custom assertion still receives every field (nulls and defaults included), keyed as in a file."""
    sample = load_samples(files[3]).samples[1]
    record = sample.to_record()
    assert record["sample_id"] == "7" and record["construct"] is None and record["assertions"] == []
    assert record["prompt"] == "folded text ☃\n" and record["metadata"]["when"] == "2024-01-02"
    assert len(record) == len(Sample.__dataclass_fields__)


def _write_jsonl(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            record = {
                "sample_id": f"s{i:06d}",
                "prompt": f"question {i} " + "x" * 100,
                "metadata": {"topic": "billing", "tags": ["a", "b"]},
                "assertions": [{"type": "contains", "value": "ok"}],
            }
            fh.write(json.dumps(record) + "\n")


def test_loading_streams_and_keeps_samples_compact(tmp_path: Path) -> None:
    """Measured with tracemalloc over 500 samples: before, the parsed records, the samples and
    the one JSON text of all of them were alive together (peak 2.5× what the loaded set keeps,
    2,330 bytes kept a sample); now the peak is the kept set plus one record (≈1.08×, 1,160 bytes
    a sample: no per-sample ``__dict__``, keys shared across lines)."""
    path = tmp_path / "many.jsonl"
    _write_jsonl(path, 500)
    load_samples(path)  # imports and caches warmed
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load_samples(path)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.watermark.count == 500
    assert not hasattr(loaded.samples[0], "__dict__")
    assert peak < 1.25 * kept
    assert kept / 500 < 1600


def test_a_duplicate_id_in_a_second_file_names_where_it_was_first_seen(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_text('{"sample_id": "x", "prompt": "p"}\n\n{"sample_id": "d", "prompt": "p"}\n')
    b = tmp_path / "b.yaml"
    b.write_text("- {sample_id: y, prompt: q}\n- {sample_id: d, prompt: q}\n")
    with pytest.raises(InputError) as err:
        load_samples([a, b])
    assert str(err.value) == (
        f"{b}: sample #2: duplicate sample_id 'd' (first seen in a.jsonl line 3); sample ids must be unique"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # lines end at \r, \r\n, \x0c and U+2028 too (as str.splitlines numbers them)
        (b'{"sample_id": "a", "prompt": "p"}\r{"sample_id": "b", "prompt": "p"}\x0c\n{oops\n', "line 4: invalid JSON"),
        (b'{"sample_id": "a", "prompt": "p"}\xe2\x80\xa8{"sample_id": "b"}\n', "sample 'b': field 'prompt'"),
        # a broken byte is named by its offset in the text (after a byte-order mark)
        (
            b'\xef\xbb\xbf{"sample_id": "a", "prompt": "p"}\n{"sample_id": "\xc3\x28"}\n',
            "(invalid continuation byte at byte 49)",
        ),
        (b'{"sample_id": "a", "prompt": "p", "promt": "q"}\n', "sample 'a': unknown sample key 'promt' (did you mean"),
        (b'{"sample_id": "a"}\n', "sample 'a': field 'prompt': Field required; add it to the sample"),
    ],
)
def test_a_streamed_jsonl_error_names_the_line_and_the_fix(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        load_samples(path)
    assert str(err.value).startswith(f"{path}: ") and expected in str(err.value)


def test_samples_with_assertions_written_alike_share_one_list(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "- {sample_id: a, prompt: p, assertions: [{type: contains, value: ok}]}\n"
        "- {sample_id: b, prompt: p, assertions: [{type: contains, value: ok}]}\n"
        "- {sample_id: c, prompt: p, assertions: [{type: contains, value: ok, weight: 1}]}\n"
        "- {sample_id: d, prompt: p, assertions: [{type: contains, value: ok, weight: 1.0}]}\n"
        "- {sample_id: e, prompt: p, assertions: [{type: contains, value: ok, weight: true}]}\n"
    )
    a, b, c, d, e = load_samples(path).samples
    assert a.assertions is b.assertions
    assert len({id(s.assertions) for s in (a, c, d, e)}) == 4  # 1, 1.0 and true are not alike
    assert d.assertions == [{"type": "contains", "value": "ok", "weight": 1.0}]
