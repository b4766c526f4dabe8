"""The messy-tables script (benchmarks/messy_tables.py): the Adult variants it builds,
the column kinds its peers see, the warnings it attributes to columns, the issue's
criteria and the page it writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "messy_tables.py"


@pytest.fixture(scope="module")
def messy():
    spec = importlib.util.spec_from_file_location("messy_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("mixed_panel", None)  # the script imports it from its folder
    if str(SCRIPT.parent) in sys.path:
        sys.path.remove(str(SCRIPT.parent))


def _adult_like() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [39.0, 50.0, np.nan],
            "fnlwgt": [77516.0, 83311.0, 215646.0],
            "workclass": pd.Categorical(["State-gov", "Private", None]),
        }
    )


def test_numbers_as_text(messy):
    text = messy.as_text(pd.Series([77516.0, 2174.0, np.nan]), grouped=True)
    assert text.dtype == "str" and text.iloc[:2].tolist() == ["77,516", "2,174"]
    assert text.isna().tolist() == [False, False, True]
    assert messy.as_text(pd.Series([39.0]), grouped=False).tolist() == ["39"]


def test_adult_variants(messy):
    X = _adult_like()
    clean, added = messy.adult_variant(X, "clean")
    pd.testing.assert_frame_equal(clean, X)
    assert added == []
    both, added = messy.adult_variant(X, "id + numbers as text")
    assert both.columns.tolist() == ["id", "age", "fnlwgt", "workclass"]
    assert added == ["id", "age", "fnlwgt"]
    assert both["id"].tolist() == ["P000001", "P000002", "P000003"]
    assert both["fnlwgt"].tolist() == ["77,516", "83,311", "215,646"]  # grouping marks
    assert both["age"].iloc[0] == "39" and pd.isna(both["age"].iloc[2])
    assert X["age"].dtype == np.float64  # the input untouched


def test_peers_read_strings_as_categorical(messy):
    X = pd.DataFrame(
        {
            "id": pd.Series(["C1", "C2"], dtype="str"),
            "code": np.array([1, 2], dtype=np.int64),
            "x": [0.5, 1.5],
        }
    )
    num, cat = messy.mp.column_kinds(messy.for_peers(X))
    assert num == ["code", "x"] and cat == ["id"]


def test_names_in_whole_names(messy):
    cols = ["age", "education-num", "education", "city60"]
    msg = "Columns 'education-num' and city60 look like codes; usage: categorical=['city60']"
    assert messy.names_in(msg, cols) == ["education-num", "city60"]


def _call(ari: float, k: int = 3, warned: tuple = ()) -> dict:
    return {"ari": ari, "k": k, "time": 0.1, "warnings": [("DataWarning", w) for w in warned]}


def test_criteria_two_sided_and_named(messy):
    clean = {s: {"craft_k": _call(0.95), "craft_auto": _call(0.9)} for s in range(4)}
    note = ("Column 'customer_id' dropped: identifier-like.",)
    messy_runs = {
        s: {"craft_k": _call(0.95 + d, warned=note), "craft_auto": _call(a, warned=note)}
        for s, d, a in [(0, 0.0, 0.9), (1, 0.04, 0.2), (2, -0.04, 0.88), (3, 0.0, 0.93)]
    }
    got = messy.criteria(clean, messy_runs, ["customer_id"])
    assert got["k_pass"] and got["auto_pass"] and got["named"]
    assert got["auto_hits"] == "3 of 4 (need 3)"
    messy_runs[1]["craft_k"] = _call(1.0, warned=note)  # better by 0.05+: the fit moved
    messy_runs[3]["craft_auto"] = _call(0.5)  # and this call did not name the column
    got = messy.criteria(clean, messy_runs, ["customer_id"])
    assert not got["k_pass"] and not got["auto_pass"] and not got["named"]
    assert messy.criteria(clean, clean, [])["named"] is None


def test_render_page(messy):
    runs = {s: {"craft_k": _call(0.9), "craft_auto": _call(0.8, k=2)} for s in range(2)}
    bad = {s: {"craft_k": _call(0.3), "craft_auto": "error: ValueError: no"} for s in range(2)}
    record = {
        "date": "today",
        "machine": "machine: test",
        "load": "load average 1.0",
        "minutes": 1.0,
        "seeds": 2,
        "r": "--no-r",
        "adult_rows": 10,
        "tables": {
            "generated": {
                "clean": {"columns": ["spend"], "added": [], "runs": runs},
                "code5": {"columns": ["spend", "code5"], "added": ["code5"], "runs": bad},
            },
            "adult": {},
        },
    }
    text, crit = messy.render(record)
    assert "| clean | CRAFT k=K | 0.90 0.90 | 0.90 | 3 | - |" in text
    assert "| code5 | CRAFT k=K | 0.30 0.30 | 0.30 | 3 | -0.60 |" in text
    assert "| CRAFT auto | error error |" in text and "error: ValueError: no" in text
    assert "| code5 | FAIL (-0.60 -0.60) | FAIL (0 of 2 (need 2); - -) | FAIL |" in text
    assert "* **clean**: no warning" in text
    assert set(crit) == {"code5"}
