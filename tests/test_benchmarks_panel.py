"""The mixed-data panel script (benchmarks/mixed_panel.py): its Gower distance against a
pair-by-pair computation, the clustering cut, and the table and verdict it writes."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "mixed_panel.py"


@pytest.fixture(scope="module")
def panel():
    spec = importlib.util.spec_from_file_location("mixed_panel", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 9
    x = rng.normal(size=n)
    x[2] = np.nan
    c = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    c[4] = np.nan
    frame = pd.DataFrame(
        {
            "x": x,
            "count": rng.integers(0, 5, size=n).astype(float),
            "const": np.full(n, 2.0),
            "c": c,
            "flag": pd.array(rng.random(n) < 0.5, dtype="boolean"),
        }
    )
    frame.loc[5, ["x", "count", "const"]] = np.nan
    frame.loc[6, ["x", "count", "const"]] = np.nan  # row 6: nothing observed, distance 1
    frame["c"] = frame["c"].where(frame.index != 6)
    frame["flag"] = frame["flag"].where(frame.index != 6)
    return frame


def _gower_pair(frame: pd.DataFrame, i: int, j: int) -> float:
    diffs = []
    for col in frame.columns:
        a, b = frame[col].iloc[i], frame[col].iloc[j]
        if pd.isna(a) or pd.isna(b):
            continue
        if col in ("c", "flag"):
            diffs.append(float(a != b))
        else:
            span = frame[col].max() - frame[col].min()
            diffs.append(abs(a - b) / span if span > 0 else 0.0)
    return float(np.mean(diffs)) if diffs else 1.0


def test_gower_distance_matches_pair_by_pair(panel):
    frame = _frame()
    before = frame.copy()
    got = panel.gower_distance(frame)
    want = [_gower_pair(frame, i, j) for i, j in itertools.combinations(range(len(frame)), 2)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(frame, before)  # the caller's data untouched
    num, cat = panel.column_kinds(frame)
    assert num == ["x", "count", "const"] and cat == ["c", "flag"]


def test_gower_average_cuts_at_k(panel):
    frame = pd.DataFrame(
        {
            "x": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2],
            "c": pd.Categorical(["a", "a", "a", "b", "b", "b"]),
        }
    )
    labels = panel.gower_average(frame, 2)
    assert len(np.unique(labels)) == 2
    assert len(np.unique(labels[:3])) == 1 and len(np.unique(labels[3:])) == 1


def test_table_and_verdict_from_scored_runs(panel):
    frame = _frame().drop(index=6)
    y = pd.Series(pd.Categorical(["u", "v"] * 4))
    gower = panel.summarise([panel.score(y, panel.run_gower(frame, 2))])
    ours = panel.summarise(
        [{"ari": gower["ari"] - 0.03, "nmi": 0.5, "purity": 0.75, "time": 2.0, "cpu": 2.0,
          "k": 2, "features": 4}]
    )  # fmt: skip
    auto = dict(ours, k=4, time=12.0)
    sets = {
        "tiny": {
            "info": {"n": 8, "p": 5, "num": 3, "cat": 2, "k_given": 2},
            "rows": {"craft_k": ours, "craft_auto": auto, "gower": gower},
        },
        "banknote": "skipped: not found",
    }
    table = panel.markdown_table(sets)
    lines = table.splitlines()
    assert lines[0].startswith("| set (n x p: num/cat) | method |")
    assert len(lines) == 2 + 3 + 1
    gower_line = next(line for line in lines if "Gower + average" in line)
    assert f"| {gower['ari']:.2f} |" in gower_line and "| 5/5 |" in gower_line
    ratio = 2.0 / gower["time"]
    assert f"| {ratio:.2g} |" in gower_line
    assert "6.0x the k=K call" in table and "skipped: not found" in table
    verdict = panel.verdict(sets)
    assert verdict[0].startswith("- MET: ARI(CRAFT k=K) >= best peer - 0.05")  # 0.03 behind
    assert verdict[1].startswith("- missed: best or tied-best")
    assert verdict[2].startswith("- missed: CRAFT auto: chosen K")  # 4 for 2 classes
    assert "tiny 6.0x" in verdict[5] and verdict[5].startswith("- missed")


def test_inputs_for_the_peers_and_for_r(panel, tmp_path):
    frame = _frame()
    data, cat_idx, which = panel.peer_inputs(frame)
    assert which == "KPrototypes" and cat_idx == [3, 4]
    x = data[:, 0].astype(float)
    assert x[2] == 0.0 and abs(x.mean()) < 1e-12  # standardised, the gap at the mean
    assert data[4, 3] == "<NA>" and data[6, 4] == "<NA>"
    assert panel.peer_inputs(frame[["x", "count"]])[2] == "KMeans"
    assert panel.peer_inputs(frame[["c", "flag"]])[2] == "KModes"
    classes = panel.write_r_csv(frame, tmp_path / "f.csv")
    assert classes == "'numeric', 'numeric', 'numeric', 'factor', 'factor'"
    back = pd.read_csv(tmp_path / "f.csv", keep_default_na=False)
    assert back.loc[6, "c"] == "" and back.loc[2, "x"] == ""  # R reads blanks as NA
    assert back.loc[0, "flag"] in ("True", "False")
