"""Run vignettes in full mode and keep their outputs (the committed ones in vignettes/output/).

Each vignette runs as a script in a fresh process with ``SPARSECLUST_OUT`` pointing at
``vignettes/output/``; its figures land there and what it prints is saved next to them
as ``<vignette>.txt``. ``vignettes/README.md`` embeds those files.

Usage::

    python vignettes/run_all.py                      # every vignette, full mode
    python vignettes/run_all.py 03 04                # the ones whose name starts so
    python vignettes/run_all.py --fast --out /tmp/v  # fast mode, elsewhere
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefixes", nargs="*", help="run only vignettes whose file name starts so")
    ap.add_argument("--fast", action="store_true", help="SPARSECLUST_FAST=1 (fewer seeds)")
    ap.add_argument("--out", type=Path, default=HERE / "output", help="output directory")
    args = ap.parse_args(argv)
    paths = sorted(HERE.glob("[0-9]*.py"))
    if args.prefixes:
        paths = [p for p in paths if any(p.name.startswith(x) for x in args.prefixes)]
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARSECLUST_OUT": str(args.out.resolve()), "MPLBACKEND": "Agg"}
    env.pop("SPARSECLUST_FAST", None)
    if args.fast:
        env["SPARSECLUST_FAST"] = "1"
    status = 0
    for path in paths:
        t0 = time.perf_counter()
        log = args.out / f"{path.stem}.txt"
        with open(log, "w") as fh:
            rc = subprocess.call(
                [sys.executable, str(path)], stdout=fh, stderr=subprocess.STDOUT, env=env
            )
        print(f"{path.name}: exit {rc}, {time.perf_counter() - t0:.0f} s -> {log}")
        status = status or rc
    return status


if __name__ == "__main__":
    raise SystemExit(main())
