"""Produce the data files shipped in ``sparseclust/datasets/data``.

Documentation of how the shipped files were made, not part of the test suite. The
files are byte-identical copies of the prepared CSV files in a source directory
(see ``datasets/README.md`` for where each came from); this script copies the
redistributable ones, then re-reads them and checks shape, class counts, missing
cells and, for MONK-3, that the labels follow the MONK-3 rule. It also checks that
the loaders of ``sparseclust.datasets`` agree with the index ``datasets.csv``.

Usage (from the repository root)::

    python datasets/make_data.py SOURCE_DIR

``SOURCE_DIR`` is the directory holding the prepared ``<name>.csv.gz`` files (one per
data set of ``datasets/README.md``); the script reads nothing else outside the
repository.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import shutil
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "sparseclust" / "datasets" / "data"

# Only these files are shipped (all are CC BY 4.0 or CC0); nothing else is copied.
# name -> (shape with label, label column, class counts, missing cells)
EXPECTED: dict[str, tuple[tuple[int, int], str, dict, int]] = {
    "spambase": ((4601, 58), "type", {"nonspam": 2788, "spam": 1813}, 0),
    "wine": ((178, 14), "class", {1: 59, 2: 71, 3: 48}, 0),
    "splice": ((3190, 61), "class", {"EI": 767, "IE": 768, "N": 1655}, 0),
    "monk3": ((432, 7), "class", {0: 204, 1: 228}, 0),
    "adult": ((48842, 15), "income", {"<=50K": 37155, ">50K": 11687}, 6465),
    "penguins": ((344, 8), "species", {"Adelie": 152, "Chinstrap": 68, "Gentoo": 124}, 19),
    "heart_disease_cleveland": ((303, 14), "diameter narrowing", {0: 164, 1: 139}, 6),
    "mushroom_complete": ((5644, 23), "class", {"e": 3488, "p": 2156}, 0),
    "soybean_large": ((683, 36), "Class", {"brown-spot": 92, "herbicide-injury": 8}, 2337),
    "zoo": ((101, 17), "type", {"mammal": 41, "bird": 20, "fish": 13, "reptile": 5}, 0),
    "house_votes_84": ((435, 17), "Class", {"democrat": 267, "republican": 168}, 392),
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def monk3_rule() -> pd.DataFrame:
    """All 432 MONK robots labelled by the (noise-free) MONK-3 rule."""
    domains = [range(1, 4), range(1, 4), range(1, 3), range(1, 4), range(1, 5), range(1, 3)]
    df = pd.DataFrame(list(itertools.product(*domains)), columns=[f"a{i}" for i in range(1, 7)])
    rule = ((df["a5"] == 3) & (df["a4"] == 1)) | ((df["a5"] != 4) & (df["a2"] != 3))
    df["class"] = rule.astype("int64")
    return df


def check_file(name: str, path: Path) -> list[str]:
    shape, label, counts, missing = EXPECTED[name]
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    errors = []
    if df.shape != shape:
        errors.append(f"{name}: shape {df.shape} != {shape}")
    observed = df[label].value_counts().to_dict()
    for level, n in counts.items():
        if observed.get(level) != n:
            errors.append(f"{name}: class {level!r} has {observed.get(level)} rows, not {n}")
    if int(df.isna().sum().sum()) != missing:
        errors.append(f"{name}: {int(df.isna().sum().sum())} missing cells, not {missing}")
    if name == "monk3" and not df.equals(monk3_rule()):
        errors.append("monk3: file differs from the MONK-3 rule")
    return errors


def check_loaders() -> list[str]:
    sys.path.insert(0, str(REPO))
    from sparseclust.datasets import list_datasets, load_dataset

    errors = []
    for row in list_datasets().itertuples(index=False):
        df = load_dataset(row.name)
        X = df.drop(columns=row.label)
        numeric = sum(
            pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in X.dtypes
        )
        got = (len(df), X.shape[1], numeric, X.shape[1] - numeric)
        want = (row.n_rows, row.n_features, row.n_numeric, row.n_categorical)
        if got != want:
            errors.append(f"{row.name}: loader gives {got}, datasets.csv says {want}")
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="directory of the prepared <name>.csv.gz files")
    args = parser.parse_args(argv)
    TARGET.mkdir(parents=True, exist_ok=True)
    errors = []
    for name in EXPECTED:
        src = args.source / f"{name}.csv.gz"
        dst = TARGET / src.name
        shutil.copyfile(src, dst)
        errors += check_file(name, dst)
        print(f"{dst.relative_to(REPO)}  sha256 {sha256(dst)}")
    errors += check_loaders()
    for err in errors:
        print("ERROR:", err, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
