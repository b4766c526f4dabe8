"""How long ``import sparseclust`` takes, next to ``import pandas, scipy.sparse``.

Each import runs in a fresh interpreter (``python -c``), alternately, ``--repeats``
times; the medians and their ratio are printed, with the heavy libraries the package
import loaded (there should be none: scikit-learn, statsmodels, matplotlib, patsy,
joblib and Dask load when a function needs them).

Both imports read compiled bytecode, as an installed package does (pip compiles it at
install): the runs write and read their ``.pyc`` files under a temporary
``PYTHONPYCACHEPREFIX`` (a source checkout on a machine with ``PYTHONDONTWRITEBYTECODE``
set would otherwise recompile the package's modules at every import, while pandas and
scipy read the bytecode pip wrote). The repository itself is left untouched.

Run: python benchmarks/import_time.py [--repeats 15]
Target (issue): at most 1.3x the time of ``import pandas, scipy.sparse``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HEAVY = ("sklearn", "statsmodels", "matplotlib", "patsy", "joblib", "dask", "distributed")


_ENV = dict(os.environ)


def _time(code: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_ENV)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    _ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    _ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="sparseclust-pyc-")
    ref_code = "import pandas, scipy.sparse"
    pkg_code = "import sparseclust"
    for _ in range(2):  # compile the bytecode, warm the file cache
        _time(ref_code), _time(pkg_code)
    ref, pkg = [], []
    for _ in range(args.repeats):
        ref.append(_time(ref_code))
        pkg.append(_time(pkg_code))
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, sparseclust; print(sorted({{m.split('.')[0] for m in sys.modules}}"
            f" & set({HEAVY!r})))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    r, p = float(np.median(ref)), float(np.median(pkg))
    print(f"python -c '{ref_code}': {r:.3f} s (median of {args.repeats})")
    print(f"python -c '{pkg_code}': {p:.3f} s (median of {args.repeats})")
    print(f"heavy libraries loaded by import sparseclust: {loaded}")
    print(f"ratio: {p / r:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
