"""``--write-state`` as Skill Graph's auditors check it: on every real reference SKILL.md and on the
variants authors really have (CRLF, a byte-order mark, a receipt already in the frontmatter with a
comment after it, a sidecar indented its own way), the written file validates against Skill
Graph's own schema for that shape, reads back as written, and keeps every byte of the author's
that the update does not own — their keys in their order, their comments, line endings and layout."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from knowmeter.comprehension import (
    frontmatter_fields,
    frontmatter_refusal,
    frontmatter_update,
    skill_verdict,
    state_update,
    write_frontmatter_state,
    write_state,
)
from knowmeter.report import ComprehensionVerdict
from knowmeter.skillgraph import load_skill
from tests.comprehension.test_state import PARTIES, _stats

SKILLS = ("a11y", "debugging", "type-safety")  # the v4 reference skills (documentation is v3)
SCHEMA_FILES = {"v4": "v0.5.6-skill.v4.schema.json", "v6": "v0.5.6-skill.schema.json"}


class _Strings(yaml.SafeLoader):
    """YAML as a JSON Schema validator sees it: dates stay the strings the author wrote."""


_Strings.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _frontmatter(raw: bytes) -> dict[str, Any]:
    text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    data: dict[str, Any] = yaml.load(re.split(r"^---[ \t]*$", text, flags=re.M)[1], Loader=_Strings)
    return data


def _schema_errors(doc: dict[str, Any], schema_file: Path) -> list[str]:
    schema = json.loads(schema_file.read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _update(skill_dir: Path) -> dict[str, Any]:
    receipt = skill_dir.parent.parent / "report.json"
    receipt.write_text("{}")
    verdict = ComprehensionVerdict.model_validate(skill_verdict(_stats(9, 10, 2), PARTIES))
    return state_update(
        verdict, at="2026-11-27T11:00:00Z", runner="knowmeter comprehend (claude)", model="openai:gpt-5",
        receipt=receipt, skill_dir=skill_dir,
    )  # fmt: skip


def _skill_copy(tmp_path: Path, raw: bytes, name: str) -> Path:
    folder = tmp_path / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(raw)
    return folder


RECEIPT_MID = (
    "eval_last_run:\n  at: '2026-01-01T00:00:00Z'\n  status: pass\n  runner: by hand\n"
    "# --- classification (kept: a comment of the author's) ---\n"
)


@pytest.mark.parametrize("name", SKILLS)
@pytest.mark.parametrize("variant", ["as-is", "crlf-bom", "receipt-mid", "v6"])
def test_every_reference_skill_written_twice_validates_and_keeps_the_authors_bytes(
    tmp_path: Path, skill_graph: Path, name: str, variant: str
) -> None:
    original = (skill_graph / "skills" / name / "SKILL.md").read_text()
    if variant == "receipt-mid":  # a receipt of an earlier run in the middle, a comment after it
        original = re.sub(r"(\nversion: [^\n]*\n)", lambda m: m.group(1) + RECEIPT_MID, original, count=1)
    if variant == "v6":
        original = original.replace("schema_version: 4\n", "schema_version: 6\n", 1)
    raw = original.encode()
    if variant == "crlf-bom":
        raw = codecs.BOM_UTF8 + original.replace("\n", "\r\n").encode()
    folder = _skill_copy(tmp_path, raw, name)
    skill = load_skill(folder)  # a byte-order mark is not "no frontmatter"
    shape = "v6" if variant == "v6" else "v4"
    assert skill.shape == shape and frontmatter_refusal(skill) is None
    fields = frontmatter_update(skill, _update(folder))
    assert list(fields) == (["eval_last_run"] if shape == "v4" else ["eval_score", "eval_failed_ids", "eval_last_run"])
    for _ in range(2):  # a second write on top of the first changes nothing more
        write_frontmatter_state(load_skill(folder), fields)
    written = (folder / "SKILL.md").read_bytes()
    front = _frontmatter(written)
    assert _schema_errors(front, skill_graph / "schemas" / SCHEMA_FILES[shape]) == []
    assert {k: load_skill(folder).frontmatter[k] for k in fields} == fields  # read back as written
    # the author's keys in their order — a receipt already there stays where it was
    assert list(front) == [*_frontmatter(raw), *(k for k in fields if k not in _frontmatter(raw))]
    # every line of the author's that is not an owned value, byte for byte and in order
    owned = re.compile(r"^(eval_last_run|eval_score|eval_failed_ids):|^  (at|status|runner):")
    kept = [line for line in raw.split(b"\n") if not owned.match(line.decode("utf-8-sig"))]
    lines = written.split(b"\n")
    assert [line for line in lines if line in kept] == kept
    assert written.startswith(codecs.BOM_UTF8) == raw.startswith(codecs.BOM_UTF8)
    if variant == "crlf-bom":
        assert all(line.endswith(b"\r") for line in lines[:-1])  # every line still ends in CRLF
    assert written.endswith(raw.split(b"\n---", 1)[1])  # the closing fence and the body untouched


def test_a_v3_skill_has_no_field_for_a_receipt(tmp_path: Path, skill_graph: Path) -> None:
    """The documentation skill is schema_version 3, whose schema (additionalProperties: false) has
    no eval_last_run: --write-state refuses it, naming the fix, instead of writing a key its lint
    rejects."""
    original = (skill_graph / "skills" / "documentation" / "SKILL.md").read_bytes()
    folder = _skill_copy(tmp_path, original, "documentation")
    skill = load_skill(folder)
    refusal = frontmatter_refusal(skill)
    assert refusal is not None and refusal.startswith("schema_version 3 frontmatter has no field for an eval receipt")
    assert "migrate the skill to schema_version 4" in refusal
    assert frontmatter_update(skill, _update(folder)) == {}


@pytest.mark.parametrize(
    ("version", "fields"),
    [
        ("3", ()),
        ("4", ("eval_last_run",)),
        ("'4'", ("eval_last_run",)),
        ("5", ("eval_last_run",)),  # v5's schema has eval_last_run, not yet the v6 Health Block
        ("6", ("eval_score", "eval_failed_ids", "eval_last_run")),
    ],
)
def test_the_fields_written_follow_the_schema_version(
    tmp_path: Path, skill_graph: Path, version: str, fields: tuple[str, ...]
) -> None:
    text = (skill_graph / "skills" / "type-safety" / "SKILL.md").read_text()
    folder = _skill_copy(tmp_path, text.replace("schema_version: 4\n", f"schema_version: {version}\n", 1).encode(), "t")
    assert frontmatter_fields(load_skill(folder)) == fields


def _sidecar(skill_graph: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(
        (skill_graph / "comprehension-json" / "type-safety" / "audit-state.json").read_text()
    )
    state.pop("application_verdict")  # the one field today's schema no longer declares
    return state


LAYOUTS = {
    "skill-graph": lambda s: json.dumps(s, indent=2, ensure_ascii=False) + "\n",
    "crlf-bom": lambda s: "\ufeff" + (json.dumps(s, indent=2) + "\n").replace("\n", "\r\n"),
    "four-spaces-no-final-newline": lambda s: json.dumps(s, indent=4),
    "tabs": lambda s: json.dumps(s, indent="\t") + "\n",
    "one-line": lambda s: json.dumps(s, separators=(",", ":")),
    "ascii-escapes": lambda s: json.dumps({**s, "owner": "Jörg"}, indent=2, ensure_ascii=True) + "\n",
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_sidecar_keeps_its_layout_and_validates(tmp_path: Path, skill_graph: Path, layout: str) -> None:
    """The sidecar is rewritten in the author's layout (it was always re-indented with two spaces,
    CRLF turned LF, a final newline added, a byte-order mark refused as invalid JSON): only the
    owned fields' text changes; the result validates against Skill Graph's sidecar schema."""
    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    path = folder / "audit-state.json"
    state = _sidecar(skill_graph)
    if layout == "ascii-escapes":
        state["owner"] = "Jörg"
    path.write_bytes(LAYOUTS[layout](state).encode())
    update = _update(folder)
    write_state(path, update)
    write_state(path, update)
    merged = {**state, **update}
    assert path.read_bytes() == LAYOUTS[layout](merged).encode()
    schema = skill_graph / "schemas" / "head-skill-audit-state.schema.json"
    assert _schema_errors(json.loads(path.read_text(encoding="utf-8-sig")), schema) == []


def test_the_repositorys_own_sidecar_schema_decides(tmp_path: Path, skill_graph: Path) -> None:
    """Skill Graph's lint checks a sidecar against the repository's ``schemas/skill-audit-state.schema.json``:
    --write-state checks its update against that one too (it used the built-in rules only, so a
    repository whose schema has no SHALLOW level got a sidecar its own lint rejects)."""
    from knowmeter.errors import InputError

    (tmp_path / ".git").mkdir()
    schema = json.loads((skill_graph / "schemas" / "head-skill-audit-state.schema.json").read_text())
    levels = schema["properties"]["comprehension_verdict"]["enum"]
    levels.remove("SHALLOW")
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "skill-audit-state.schema.json").write_text(json.dumps(schema))
    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    path = folder / "audit-state.json"
    path.write_text(json.dumps(_sidecar(skill_graph), indent=2) + "\n")
    before = path.read_bytes()
    update = _update(folder)
    assert update["comprehension_verdict"] == "SHALLOW"
    with pytest.raises(InputError, match=r"audit-state\.json: not written: enum-fail: `comprehension_verdict` must be"):
        write_state(path, update)
    assert path.read_bytes() == before


ODD = "a\u2028b\x85c\x7fd\u00e9\U0001f680e"  # YAML line breaks, a character YAML cannot hold raw, é, an emoji


def test_odd_characters_read_back_as_written(tmp_path: Path, skill_graph: Path) -> None:
    """A runner or model name (user text) with characters YAML reads as line breaks or refuses
    raw: the SKILL.md still loads and gives back the same strings (U+2028 was folded to a space,
    DEL made the whole SKILL.md unreadable); a sidecar field holding a lone surrogate escape
    (valid JSON) is kept (it crashed the write)."""
    folder = _skill_copy(tmp_path, (skill_graph / "skills" / "type-safety" / "SKILL.md").read_bytes(), "t")
    run = {"at": "2026-11-27T11:00:00Z", "status": "pass", "runner": ODD, "model": ODD}
    write_frontmatter_state(load_skill(folder), {"eval_last_run": run})
    assert load_skill(folder).frontmatter["eval_last_run"] == run
    path = folder / "audit-state.json"
    path.write_text('{"owner": "lone \\ud800 half", "n": 1}\n')
    write_state(path, {"eval_last_run": run})
    assert json.loads(path.read_text()) == {"owner": "lone \ud800 half", "n": 1, "eval_last_run": run}


def test_the_repositorys_schema_for_the_version_decides_the_frontmatter_write(
    tmp_path: Path, skill_graph: Path
) -> None:
    """With ``schemas/skill.v4.schema.json`` in the repository, that schema is asked before the run:
    Skill Graph's own v4 schema takes the receipt; one without ``eval_last_run`` (an older revision)
    gets a refusal naming the key, before anything runs, and a direct write changes nothing."""
    from knowmeter.errors import InputError

    (tmp_path / ".git").mkdir()
    (tmp_path / "schemas").mkdir()
    schema = json.loads((skill_graph / "schemas" / "v0.5.6-skill.v4.schema.json").read_text())
    (tmp_path / "schemas" / "skill.v4.schema.json").write_text(json.dumps(schema))
    folder = _skill_copy(tmp_path, (skill_graph / "skills" / "type-safety" / "SKILL.md").read_bytes(), "type-safety")
    assert frontmatter_refusal(load_skill(folder)) is None
    other = tmp_path / "older"
    (other / ".git").mkdir(parents=True)
    (other / "schemas").mkdir()
    del schema["properties"]["eval_last_run"]
    (other / "schemas" / "skill.v4.schema.json").write_text(json.dumps(schema))
    folder = _skill_copy(other, (skill_graph / "skills" / "type-safety" / "SKILL.md").read_bytes(), "type-safety")
    skill = load_skill(folder)
    refusal = frontmatter_refusal(skill)
    assert refusal is not None and refusal.startswith(
        "additionalProperty: `eval_last_run` is not declared in the v4 frontmatter schema; the repository's schema"
    )
    before = (folder / "SKILL.md").read_bytes()
    with pytest.raises(InputError, match="not written: additionalProperty: `eval_last_run`"):
        write_frontmatter_state(skill, frontmatter_update(skill, _update(folder)))
    assert (folder / "SKILL.md").read_bytes() == before


_VALUES = (
    "plain text", '"quoted: text"', "|\n  line one\n  line two", ">-\n  folded\n  text\n", "[a, b, {c: d}]",
    "{x: 1, y: [2, 3]}", "\n  - a\n  - b: c\n    d: e", "\n  k: v\n  nested:\n    deep: 1\n  # inner\n  last: x",
    "2026-01-01", "", "12  # trailing comment", "|+\n  keep\n",
    "\n  at: '2026-01-01T00:00:00Z'\n  status: pass",
)  # fmt: skip


@pytest.mark.slow
def test_random_frontmatters_keep_every_other_key_value_comment_and_line_ending(tmp_path: Path) -> None:
    """300 seeded random frontmatters — block / flow / literal / folded values, comments and blank
    lines between keys, the owned keys anywhere or absent, CRLF, a byte-order mark: after the write
    every other key has its value and place, every top-level comment is there, the owned keys read
    back as written, line endings and the mark are kept."""
    import random

    rng = random.Random(20261127)
    update: dict[str, Any] = {"eval_last_run": {"at": "2026-11-27T11:00:00Z", "status": "fail"}, "eval_score": 4.5}
    for i in range(300):
        keys = ["name", *(f"k{j}" for j in range(rng.randint(1, 6))), *(k for k in update if rng.random() < 0.5)]
        rng.shuffle(keys)
        lines: list[str] = []
        for key in keys:
            if rng.random() < 0.3:
                lines.append(rng.choice(["# a comment", "", "#"]))
            value = "sk" if key == "name" else rng.choice(_VALUES)
            lines.append(f"{key}:{'' if value.startswith(chr(10)) else ' '}{value}")
        nl = rng.choice(["\n", "\r\n"])
        text = ("\ufeff" if rng.random() < 0.2 else "") + "\n".join(["---", *lines, "# closing", "---", "# Body", ""])
        text = text.replace("\n", nl)
        folder = tmp_path / str(i) / "sk"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(text.encode())
        skill = load_skill(folder)
        write_frontmatter_state(skill, update)
        written = (folder / "SKILL.md").read_bytes().decode()
        again = load_skill(folder).frontmatter
        assert {k: again[k] for k in update} == update, text
        assert [(k, v) for k, v in again.items() if k not in update] == [
            (k, v) for k, v in skill.frontmatter.items() if k not in update
        ], text
        assert list(again) == [*skill.frontmatter, *(k for k in update if k not in skill.frontmatter)], text
        comments = [line for line in text.lstrip("\ufeff").split(nl) if line.startswith("#")]
        assert [line for line in written.lstrip("\ufeff").split(nl) if line.startswith("#")] == comments, text
        assert written.startswith("\ufeff") == text.startswith("\ufeff")
        assert nl == "\n" or re.search(r"(?<!\r)\n", written) is None, text


def test_a_symlinked_skill_and_sidecar_stay_links(tmp_path: Path, skill_graph: Path) -> None:
    """Libraries link skills into place: the write goes to the file the link names, and the links
    stay (the rename replaced each link by a copy, leaving the real file as it was)."""
    real = _skill_copy(tmp_path / "real", (skill_graph / "skills" / "type-safety" / "SKILL.md").read_bytes(), "t")
    (real / "audit-state.json").write_text(json.dumps(_sidecar(skill_graph), indent=2) + "\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in ("SKILL.md", "audit-state.json"):
        (linked / name).symlink_to(real / name)
    update = _update(linked)
    write_state(linked / "audit-state.json", update)
    run = update["eval_last_run"]
    (linked / "audit-state.json").unlink()  # the v4 frontmatter path: no sidecar beside it
    write_frontmatter_state(load_skill(linked), {"eval_last_run": run})
    assert (linked / "SKILL.md").is_symlink()
    assert json.loads((real / "audit-state.json").read_text())["eval_last_run"] == run
    assert load_skill(real).frontmatter["eval_last_run"] == run


def test_the_authors_text_is_not_scrubbed_nor_its_permissions_changed(tmp_path: Path, skill_graph: Path) -> None:
    """A database skill documents connection strings and example keys: the write kept secrets out
    of the whole file, so ``postgres://app:s3cret@db`` in the body became ``postgres://[redacted]@db``
    and the sidecar's own text likewise, and a 0640 file came back 0644. Now only knowmeter's own
    values are scrubbed (a runner naming an API key)."""
    text = (skill_graph / "skills" / "type-safety" / "SKILL.md").read_text()
    body = "\n## Connecting\n\nUse `postgres://app:s3cret@db:5432/app` and `API_KEY=sk-test-123456`.\n"
    folder = _skill_copy(tmp_path, (text + body).encode(), "type-safety")
    (folder / "SKILL.md").chmod(0o640)
    secret_runner = {"at": "2026-11-27T11:00:00Z", "status": "pass", "runner": "agent --api-key sk-live-abcdef123"}
    write_frontmatter_state(load_skill(folder), {"eval_last_run": secret_runner})
    written = (folder / "SKILL.md").read_text()
    assert written.endswith(body) and (folder / "SKILL.md").stat().st_mode & 0o777 == 0o640
    assert load_skill(folder).frontmatter["eval_last_run"]["runner"] == "agent --api-key [redacted]"
    path = folder / "audit-state.json"
    state = {**_sidecar(skill_graph), "owner": "ops (pager: https://ops:hunter22@pager.example)"}
    path.write_text(json.dumps(state, indent=2) + "\n")
    path.chmod(0o600)
    write_state(path, {"eval_last_run": secret_runner})
    assert json.loads(path.read_text())["owner"] == state["owner"] and path.stat().st_mode & 0o777 == 0o600


def test_a_sidecar_with_a_key_twice_is_refused_not_halved(tmp_path: Path, skill_graph: Path) -> None:
    """JSON.parse keeps the last of two equal keys, so the rewrite would drop the first one the
    author wrote: refused in one line naming the key, the file untouched."""
    from knowmeter.errors import InputError

    folder = tmp_path / "skills" / "type-safety"
    folder.mkdir(parents=True)
    path = folder / "audit-state.json"
    text = json.dumps(_sidecar(skill_graph), indent=2).replace('"owner": ', '"owner": "first",\n  "owner": ', 1)
    path.write_text(text)
    with pytest.raises(InputError, match=r"audit-state\.json: cannot read the JSON \(the key 'owner' appears twice"):
        write_state(path, _update(folder))
    assert path.read_text() == text
