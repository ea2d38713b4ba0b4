"""``knowmeter.jsonio``: strict compact JSON out, tolerant JSON in."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from knowmeter import jsonio


def test_round_trip_matches_the_standard_library() -> None:
    value = {"a": [1, 2.5, None, True, "é ✓"], "b": {"c": (1, 2)}, "n": np.float64(0.25), "i": np.int64(3)}
    assert jsonio.loads(jsonio.dumps(value)) == json.loads(json.dumps(value, default=float))
    assert jsonio.dumps({"k": "é"}) == '{"k":"é"}'.encode()  # compact, not ASCII-escaped


def test_non_finite_numbers_are_written_as_null_and_read_from_other_tools() -> None:
    assert jsonio.loads(jsonio.dumps({"x": math.nan, "y": math.inf})) == {"x": None, "y": None}
    read = jsonio.loads('{"x": NaN, "y": -Infinity}')
    assert math.isnan(read["x"]) and read["y"] == -math.inf


def test_bad_json_and_unserialisable_values_raise_the_usual_errors() -> None:
    with pytest.raises(ValueError, match="Expecting"):
        jsonio.loads(b'{"x": ')
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonio.dumps({"s": {1, 2}})


def test_print_json_writes_to_binary_and_text_only_streams(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    import contextlib
    import io

    from knowmeter.cli._output import print_json

    print_json({"k": "é", "n": [1, 2]})
    assert json.loads(capsysbinary.readouterr().out) == {"k": "é", "n": [1, 2]}
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_json({"k": "é"})
    assert text.getvalue() == '{\n  "k": "é"\n}\n'
