"""Dask executor: row blocks held on the workers, and the reading of a Dask DataFrame.

The data are read partition by partition with the variable spec of the in-memory
front (:func:`~sparseclust._data.table.transform_like`), after one pass that fixes the
levels of every categorical variable for all partitions (a column's levels: its
pandas categories when they are known, else its observed values sorted as the
in-memory front sorts them): :func:`read_dask` returns the typed partitions as a
:class:`DaskRead`. A method turns them into its own blocks (``_craft/dask.py``,
``_dpmeans/dask.py``, ``_sparse/dask.py``) and hands its block kernels to the
executor: :class:`FutureBlocks` with a ``distributed.Client`` active (blocks and
per-pass states stay on the workers), else the in-memory ``LocalBlocks`` over the
computed partitions. This module imports no method module.
"""

from __future__ import annotations

import functools
import operator
import pickle
import threading
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._data.dtypes import _sorted_levels, densify
from .._data.params import user_stacklevel, watch_sigint
from .._data.screen import column_stats, current_options
from .._data.stages import SMALL_SD, check_magnitudes, warn_constant
from .._data.table import VariableSpec, build_table, is_dask_collection, transform_like
from ..exceptions import PerformanceWarning
from .blocks import LocalBlocks
from .parallel import _PROGRESS, progress_bar
from .threads import single_blas_thread

#: Data of at most this many cells (rows x columns) on a cluster draw a
#: :class:`~sparseclust.exceptions.PerformanceWarning`: they fit in memory (40 MB as
#: float64), where a whole fit takes seconds; on a cluster each pass costs a round
#: trip (Adult, 48,842 x 14: about 2.5x the in-memory call on a 2-worker LocalCluster).
SMALL_CELLS = 5_000_000

__all__ = [
    "DaskPrepared",
    "DaskRead",
    "FutureBlocks",
    "TypedPart",
    "block_executor",
    "center_scale",
    "is_dask_collection",
    "labels_dask",
    "prepared",
    "read_dask",
    "route_backend",
    "scaled_blocks",
]


def _client():
    try:
        from distributed import get_client
    except ImportError:  # pragma: no cover - distributed is part of the extra
        return None
    try:
        return get_client()
    except ValueError:
        return None


#: Per-block states of the running fits, in each worker process (key -> state).
_STORE: dict[str, Any] = {}


def _op_kernel(block, offset, kernel, key_in, key_out, *args):
    """Run ``kernel`` on a block with the state stored under ``key_in`` (consumed);
    store the new state under ``key_out``; return only the small result."""
    state = _STORE.pop(key_in, None) if key_in is not None else None
    new_state, result = kernel(block, offset, state, *args)
    if new_state is not None:  # stateless kernels (a row, a maximum) leave nothing behind
        _STORE[key_out] = new_state
    return result


def _op_stored(block, offset, key):
    return _STORE.get(key)


def _op_copy(block, offset, key_in, key_out):
    _STORE[key_out] = _STORE[key_in].copy()


def _op_drop(block, offset, keys):
    for key in keys:
        _STORE.pop(key, None)


def _run_ops(blocks, offsets, ops):
    """One task on one worker: the operations ``(i, op, args)`` in order, ``i``
    indexing ``blocks`` / ``offsets``; their results in the same order."""
    with single_blas_thread():  # the kernels' products are small; threads only contend
        return [op(blocks[i], offsets[i], *args) for i, op, args in ops]


class _Holder:
    """The blocks of one worker, held by an actor on that worker: a batch of
    operations is one direct call to it (about 2 ms a round trip on a local cluster,
    against about 12 ms for a task through the scheduler). The operations and their
    results travel as one pickled message each: left to Dask, every small array in
    them would be a frame of its own (52 operations: 16 ms a call instead of 3.4)."""

    def __init__(self, blocks: list[Any], offsets: list[int]) -> None:
        self.blocks = blocks
        self.offsets = offsets

    def run(self, message: bytes) -> bytes:
        out = _run_ops(self.blocks, self.offsets, pickle.loads(message))
        return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)


def _new_key() -> str:
    return f"sparseclust-{uuid.uuid4().hex}"


class _Stopped(Exception):
    """Raised in the fits of an interrupted :meth:`FutureBlocks.run_together`."""


class _Request:
    """Operations ``[(j, op, args), ...]`` of one thread, waiting for the next batch."""

    __slots__ = ("ops", "results", "error", "done")

    def __init__(self, ops: list[tuple]) -> None:
        self.ops = ops
        self.results: list[Any] | None = None
        self.error: BaseException | None = None
        self.done = False


def _finished(futures: list[Any], interrupted: threading.Event) -> Any:
    """The futures as they finish, polling ``interrupted`` every 0.2 s (a
    KeyboardInterrupt when it is set)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        if interrupted.is_set():
            raise KeyboardInterrupt
        done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
        yield from done


class FutureBlocks:
    """Blocks held by a ``distributed`` cluster.

    Each block's kernels run on the worker holding the block, and its state stays
    in that worker's memory between passes (only the small results travel). A pass
    is one call per *worker* (all its blocks, in block order), not one task per
    block: each worker's blocks are held by an actor (:class:`_Holder`) that the
    driver calls directly.

    :meth:`run_together` runs several fits (restarts) at once, each in a thread of
    the driver: their passes are batched, so one task per worker carries the
    kernels of every running fit, and a pass of ten restarts costs one round trip,
    not ten. A fit's results do not depend on the batching (each fit's kernels run
    on its own states, in its own order). States freed by :meth:`release` are
    dropped with the next batch (or by :meth:`close`), never by stray tasks.
    """

    #: A call costs a round trip: cores merge steps where they can (one call, not two).
    calls_are_round_trips = True

    def __init__(self, client: Any, blocks: list[Any], sizes: list[int]) -> None:
        self.client = client
        self.blocks = blocks
        self.sizes = [int(s) for s in sizes]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64).tolist()
        self.n = int(sum(self.sizes))
        from distributed import wait

        wait(blocks)
        who = client.who_has(blocks)
        self.workers = [sorted(who[b.key])[0] for b in blocks]
        mine: dict[str, list[int]] = {}
        for j, w in enumerate(self.workers):
            mine.setdefault(w, []).append(j)
        self._where = {j: (w, i) for w, js in mine.items() for i, j in enumerate(js)}
        self._holders = {
            w: client.submit(
                _Holder,
                [blocks[j] for j in js],
                [self.offsets[j] for j in js],
                workers=[w],
                allow_other_workers=False,
                actor=True,
            ).result()
            for w, js in mine.items()
        }
        self._cond = threading.Condition()
        self._active = 0  # threads of run_together still running
        self._stopping = False  # run_together interrupted: its fits stop at their next pass
        self._pending: list[_Request] = []
        self._drops: dict[int, list[str]] = {}  # block -> state keys to drop
        self._local = threading.local()
        self.round_trips = 0

    def __len__(self) -> int:
        return len(self.blocks)

    def initial_states(self) -> list[Any]:
        return [None] * len(self.blocks)

    # ------------------------------------------------------------ batching
    def _execute(self, ops: list[tuple]) -> list[Any]:
        """Results of ``ops`` (``(j, op, args)``): now, or with the next batch when
        this thread is one of :meth:`run_together`'s."""
        req = _Request(ops)
        with self._cond:
            if getattr(self._local, "batched", False):
                if self._stopping:
                    raise _Stopped
                self._pending.append(req)
                self._maybe_flush()
                while not req.done and not self._stopping:
                    self._cond.wait()
                if not req.done:
                    raise _Stopped
            else:
                self._send([req])
        if req.error is not None:
            raise req.error
        return req.results

    def _maybe_flush(self) -> None:
        """With the lock held: when every running fit waits, send their batch."""
        while self._pending and len(self._pending) >= self._active:
            batch, self._pending = self._pending, []
            self._send(batch)
            self._cond.notify_all()

    def _send(self, batch: list[_Request]) -> None:
        """With the lock held: one task per worker for every operation of ``batch``
        and the pending drops; the lock is released while the cluster works."""
        per_worker: dict[str, list] = {}  # worker -> [(request, position, j, op, args)]
        drops, self._drops = self._drops, {}
        for j, keys in drops.items():
            per_worker.setdefault(self.workers[j], []).append((None, 0, j, _op_drop, (keys,)))
        for req in batch:
            req.results = [None] * len(req.ops)
            for pos, (j, op, args) in enumerate(req.ops):
                per_worker.setdefault(self.workers[j], []).append((req, pos, j, op, args))
        futures = [
            self._holders[w].run(
                pickle.dumps(
                    [(self._where[j][1], op, args) for _, _, j, op, args in items],
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            )
            for w, items in per_worker.items()
        ]
        self.round_trips += 1
        self._cond.release()
        try:
            outs = [pickle.loads(f.result()) for f in futures]
        except BaseException as err:  # every waiting fit stops with the cluster's error
            for req in batch:
                req.error = err
            if not batch:
                raise
            outs = None
        finally:
            self._cond.acquire()
        if outs is not None:
            for items, out in zip(per_worker.values(), outs):
                for (req, pos, *_), r in zip(items, out):
                    if req is not None:
                        req.results[pos] = r
        for req in batch:
            req.done = True

    def run_together(self, tasks: list[Any]) -> list[Any]:
        """``[task() for task in tasks]``, the tasks in threads of the driver with
        their passes batched (see the class). Results in task order; the first
        error is raised once every task has stopped."""
        if len(tasks) <= 1:
            return [t() for t in tasks]
        from concurrent.futures import ThreadPoolExecutor

        with self._cond:
            self._active = len(tasks)

        def run(task):
            self._local.batched = True
            try:
                return task()
            finally:
                self._local.batched = False
                with self._cond:
                    self._active -= 1
                    self._maybe_flush()

        with ThreadPoolExecutor(max_workers=len(tasks)) as pool, watch_sigint() as interrupted:
            futures = [pool.submit(run, t) for t in tasks]
            try:
                done = _finished(futures, interrupted)
                for _ in progress_bar(done, _PROGRESS.get(), "fits", len(futures)):
                    pass  # a bar over the fits as they finish
                return [f.result() for f in futures]
            except BaseException:  # Ctrl-C (or a fit's error): the other fits stop too
                with self._cond:
                    self._stopping = True
                    self._pending = []
                    self._cond.notify_all()
                for f in futures:
                    f.cancel()
                raise
            finally:
                pool.shutdown(wait=True)
                self._stopping = False

    # ------------------------------------------------------------ operations
    def map(self, kernel, states, *args):
        keys = [_new_key() for _ in states]
        ops = [(j, _op_kernel, (kernel, s, k, *args)) for j, (s, k) in enumerate(zip(states, keys))]
        return keys, self._execute(ops)

    def call(self, j, kernel, state, *args):
        key = _new_key()
        return key, self._execute([(j, _op_kernel, (kernel, state, key, *args))])[0]

    def call_many(self, calls):
        """``[call(*c) for c in calls]`` in one round trip: ``(j, kernel, state, *args)``."""
        keys = [_new_key() for _ in calls]
        ops = [
            (j, _op_kernel, (kernel, s, key, *args))
            for (j, kernel, s, *args), key in zip(calls, keys)
        ]
        return list(zip(keys, self._execute(ops)))

    def fetch(self, states):
        return self._execute([(j, _op_stored, (key,)) for j, key in enumerate(states)])

    def state_futures(self, states):
        """Futures of the states themselves (for lazy results built on them)."""
        return [
            self.client.submit(
                _op_stored, None, 0, key, workers=[w], allow_other_workers=False, pure=False
            )
            for key, w in zip(states, self.workers)
        ]

    def copy(self, states):
        """New states equal to ``states`` (each kernel consumes the state it reads)."""
        keys = [_new_key() for _ in states]
        self._execute([(j, _op_copy, (a, b)) for j, (a, b) in enumerate(zip(states, keys))])
        return keys

    def release(self, *state_lists) -> None:
        """Free states (one list per fit) on the workers: with the next batch when this
        thread is one of :meth:`run_together`'s, else now (one call per worker,
        awaited: nothing of a finished fit is left on the cluster)."""
        with self._cond:
            for states in state_lists:
                for j, key in enumerate(states):
                    if key is not None:
                        self._drops.setdefault(j, []).append(key)
            if self._drops and not getattr(self._local, "batched", False):
                self._send([])


def route_backend(x: Any, data: Any, backend: str) -> tuple[Any, Any, bool]:
    """(x, data, run on Dask?) after ``backend=``: compute or wrap as asked."""
    lazy = is_dask_collection(x) or is_dask_collection(data)
    if backend == "numpy" and lazy:
        x = x.compute() if is_dask_collection(x) else x
        data = data.compute() if is_dask_collection(data) else data
        return x, data, False
    if backend == "dask" and not lazy:
        try:
            import dask.dataframe as dd
        except ImportError as err:
            raise ImportError(
                "backend='dask' needs Dask: pip install 'sparseclust[dask]'."
            ) from err
        if isinstance(x, str):
            data = dd.from_pandas(pd.DataFrame(data), chunksize=1_000_000)
        else:
            x = dd.from_pandas(_as_frame_for_dask(x), chunksize=1_000_000)
        return x, data, True
    return x, data, lazy


def _as_frame_for_dask(x: Any) -> pd.DataFrame:
    if isinstance(x, pd.DataFrame):
        return x
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"x must be a DataFrame or a 2-D array; got {arr.ndim} dimension(s).")
    return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])


# ----------------------------------------------------------------- reading the data
class TypedPart(NamedTuple):
    """One partition read with the fit's variable spec (it lives on a worker)."""

    #: numeric cells (rows x numeric variables, NaN where missing)
    num: np.ndarray
    #: integer level codes (rows x categorical variables, -1 where missing)
    codes: np.ndarray
    #: the partition's row index (all rows, dropped ones included)
    index: pd.Index
    #: rows the missing-value policy dropped (bool, one per row of ``index``)
    dropped: np.ndarray


class _PartStats(NamedTuple):
    """Column statistics of one typed partition, reduced on the driver."""

    n: int
    cnt: np.ndarray
    sum: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    levels: list[np.ndarray]


@dataclass(frozen=True, eq=False)
class DaskRead:
    """A Dask DataFrame read into typed partitions: what every method's preparation
    starts from (:func:`read_dask`)."""

    #: the variable spec, the levels of every categorical fixed over all partitions
    spec: VariableSpec
    #: the typed partitions (:class:`TypedPart`; futures on a cluster), or ``None``
    #: once a preparation has turned them into its blocks
    raws: list[Any] | None
    #: ``map(f, items, *args)`` on the workers or here
    run: _Runner
    #: the active ``distributed.Client`` or ``None``
    client: Any
    #: rows read (dropped ones excluded) and the rows of each partition
    n: int
    sizes: list[int]
    #: observed cells and their sum, per numeric variable
    cnt: np.ndarray
    sum: np.ndarray
    #: per categorical variable: the count of each level, and the number of levels
    lv_counts: list[np.ndarray]
    n_levels: list[int]
    #: per partition: (row index, dropped rows)
    parts: list[tuple[pd.Index, np.ndarray]]
    #: the Dask DataFrame read
    ddf: Any


@dataclass(frozen=True, eq=False)
class DaskPrepared:
    """What a method's fit needs of a Dask DataFrame: its blocks on an executor, how
    they were scaled and how to put the labels back on the input's partitions."""

    spec: VariableSpec
    #: the row blocks (:class:`FutureBlocks` on a cluster, else ``LocalBlocks``)
    executor: Any
    #: column means and sds used to standardise the numeric variables (``None``: raw)
    center: np.ndarray | None
    scale: np.ndarray | None
    #: per partition: (row index, dropped rows); the rows of each block
    parts: list[tuple[pd.Index, np.ndarray]]
    sizes: list[int]
    ddf: Any
    #: the method's data object over ``executor`` (CRAFT: ``Blocked``), if any
    data: Any = None
    #: the design's column names (DP-means: numeric then one-hot), if any
    names: list[str] | None = None

    @property
    def n_dropped(self) -> int:
        """Rows the missing-value policy dropped, over all partitions."""
        return int(sum(int(dr.sum()) for _, dr in self.parts))


def _frame_of(x: Any, data: Any) -> tuple[Any, Any]:
    """(formula or None, the Dask DataFrame)."""
    if isinstance(x, str):
        return x, data
    return None, x


def _part_levels(part: pd.DataFrame, spec: VariableSpec) -> dict[str, list]:
    """Observed values of every categorical variable in one partition."""
    t = _evaluated(part, spec)
    out = {}
    for c in spec.categorical_names:
        s = densify(t[c])
        out[c] = list(pd.unique(s.dropna().to_numpy(dtype=object)))
    return out


def _evaluated(part: pd.DataFrame, spec: VariableSpec) -> pd.DataFrame:
    if spec.formula is None:
        return part.set_axis([str(c) for c in part.columns], axis=1)
    from .._data.formula import evaluate_terms

    cols, _, _ = evaluate_terms(
        spec.codes or {}, part, eval_env=spec.eval_env, formula=spec.formula, what="data"
    )
    return pd.DataFrame(cols, index=part.index)


def _read_part(part: pd.DataFrame, spec: VariableSpec, missing: str) -> TypedPart:
    # the magnitudes are checked over all partitions (_check_read), not per partition
    t = transform_like(spec, part, missing=missing, check_magnitude=False)
    return TypedPart(t.numeric, t.codes, part.index, t.dropped)


def _raw_stats(raw: TypedPart, n_levels: list[int]) -> _PartStats:
    num, codes = raw.num, raw.codes
    obs = ~np.isnan(num)
    x = np.where(obs, num, 0.0)
    lv = [np.bincount(codes[:, j][codes[:, j] >= 0], minlength=L) for j, L in enumerate(n_levels)]
    lo = np.where(obs, num, np.inf).min(axis=0, initial=np.inf)
    hi = np.where(obs, num, -np.inf).max(axis=0, initial=-np.inf)
    return _PartStats(
        n=num.shape[0] if num.size else codes.shape[0],
        cnt=obs.sum(axis=0),
        sum=x.sum(axis=0),
        lo=lo,
        hi=hi,
        levels=lv,
    )


def _sq_dev(raw: TypedPart, center: np.ndarray) -> np.ndarray:
    num = raw.num
    dev = np.where(np.isnan(num), 0.0, num - center)
    return (dev * dev).sum(axis=0)


def _max_dev(raw: TypedPart, center: np.ndarray, cols: np.ndarray) -> np.ndarray:
    dev = raw.num[:, cols] - center[cols]
    return np.abs(np.where(np.isnan(dev), 0.0, dev)).max(axis=0, initial=0.0)


def _sq_dev_scaled(raw: TypedPart, center: np.ndarray, cols: np.ndarray, top: np.ndarray):
    dev = (raw.num[:, cols] - center[cols]) / top
    dev = np.where(np.isnan(dev), 0.0, dev)
    return (dev * dev).sum(axis=0)


class _Runner:
    """``map(f, items, *args) -> list``: futures on a client, else dask.compute."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def map(self, f, items, *args, keep: bool = False):
        if self.client is not None:
            futs = [self.client.submit(f, it, *args, pure=False) for it in items]
            return futs if keep else self.client.gather(futs)
        import dask
        from dask.delayed import Delayed

        if items and isinstance(items[0], Delayed):
            return list(dask.compute(*[dask.delayed(f)(it, *args) for it in items]))
        return [f(it, *args) for it in items]


def _head_spec(
    formula, ddf, head, categorical, numeric, allow_categorical, run=None, parts=None
) -> Any:
    """The column table of the first rows: kinds detected as in memory, and the
    screen's decisions taken on the whole frame (the value counts of the columns it
    screens, summed over the partitions ``parts``), so that a Dask frame's columns are
    screened as the same rows in memory would be."""
    read = functools.partial(
        build_table,
        formula if formula is not None else head,
        data=head if formula is not None else None,
        categorical=categorical,
        numeric=numeric,
        missing="native",
        missing_choices=("native",),
        allow_categorical=allow_categorical,
        allow_constant=True,
        min_rows=1,
        check_magnitude=False,  # checked over all partitions (_check_read)
    )
    options = current_options()
    if not options.enabled or run is None:
        return read()
    raw = read(screen=False, allow_categorical=True)
    names = [
        i.name
        for i in raw.spec.columns
        if i.reason == "detected"
        and (i.kind == "categorical" or i.dtype.lower().startswith(("int", "uint")))
        and list(raw.spec.levels.get(i.name, ())) != [False, True]
    ]
    if not names:
        return read()
    found = run.map(_part_screen_stats, parts, raw.spec, names)
    stats = {c: functools.reduce(operator.add, [f[c] for f in found]) for c in names}
    return read(screen_stats=stats)


def _part_screen_stats(part: pd.DataFrame, spec: VariableSpec, names: list[str]) -> dict:
    """The screen's statistics of the columns ``names`` in one partition."""
    t = _evaluated(part, spec)
    return {c: column_stats(t[c]) for c in names}


def _levels_over_parts(t0: Any, ddf: Any, head: pd.DataFrame, run: _Runner, parts) -> dict:
    """The levels of every categorical variable over all partitions (known pandas
    categories and booleans are kept as they are; others: observed values sorted as
    the in-memory front sorts them)."""
    spec0 = t0.spec
    known = {
        c: list(t0.levels[c])
        for c in spec0.categorical_names
        if spec0.formula is None
        and c in head.columns
        and isinstance(ddf.dtypes[c], pd.CategoricalDtype)
        and bool(getattr(ddf[c].cat, "known", False))
    }
    lumped = {d.name for d in spec0.screening if d.action == "lumped"}
    known.update({c: list(t0.levels[c]) for c in lumped})  # the kept levels, then "(other)"
    bools = {c for c in spec0.categorical_names if list(t0.levels[c]) == [False, True]}
    levels = dict(spec0.levels)
    todo = [c for c in spec0.categorical_names if c not in known and c not in bools]
    if todo:
        found = run.map(_part_levels, parts, spec0)
        for c in todo:
            vals: list = []
            seen: set = set()
            for f in found:
                for v in f[c]:
                    if v not in seen:
                        seen.add(v)
                        vals.append(v)
            levels[c] = pd.Index(_sorted_levels(vals), dtype=object)
    for c, lv in known.items():
        levels[c] = pd.Index(lv)
    return levels


def _check_read(spec: VariableSpec, stats: list[_PartStats], constant: str) -> list[str]:
    """Too few rows, numeric columns never observed, constant columns, columns too
    large for the methods' sums of squares (over all rows, after the constant ones are
    dropped): as in memory. Returns the constant columns to drop (``constant="drop"``);
    ``"raise"`` makes them an error, ``"keep"`` keeps them."""
    n = int(sum(s.n for s in stats))
    P, Q = len(spec.numeric_names), len(spec.categorical_names)
    if n < 2:
        raise ValueError(f"n_obs={n} must be >= 2; pass more rows.")
    cnt = np.sum([s.cnt for s in stats], axis=0) if P else np.zeros(0)
    lo = np.min([s.lo for s in stats], axis=0) if P else np.zeros(0)
    hi = np.max([s.hi for s in stats], axis=0) if P else np.zeros(0)
    lv_counts = [np.sum([s.levels[j] for s in stats], axis=0) for j in range(Q)]
    empty = [c for j, c in enumerate(spec.numeric_names) if cnt[j] == 0]
    if empty:
        raise ValueError(f"Columns {empty} have no observed value; drop them.")
    if constant == "keep":
        _check_magnitudes(spec, n, lo, hi, ())
        return []
    const = {c for j, c in enumerate(spec.numeric_names) if lo[j] == hi[j]}
    const |= {c for j, c in enumerate(spec.categorical_names) if (lv_counts[j] > 0).sum() <= 1}
    ordered = [c for c in spec.names if c in const]
    if ordered and constant == "raise":
        raise ValueError(
            f"Columns {ordered} are constant (one distinct value) and carry no clustering "
            f"information; drop them (e.g. ddf.drop(columns={ordered}))."
        )
    if ordered and len(ordered) == len(spec.names):
        raise ValueError(
            f"every column is constant (one distinct value): {ordered}; there is nothing "
            "to cluster on."
        )
    _check_magnitudes(spec, n, lo, hi, ordered)
    return ordered


def _check_magnitudes(spec: VariableSpec, n: int, lo, hi, drop: list[str] | tuple) -> None:
    """The front's magnitude rule over all rows, on the columns kept."""
    keep = [j for j, c in enumerate(spec.numeric_names) if c not in drop]
    max_abs = np.maximum(np.abs(lo), np.abs(hi))[keep] if keep else np.zeros(0)
    names = [spec.numeric_names[j] for j in keep]
    check_magnitudes(max_abs, names, n, len(spec.names) - len(drop))


def _keep_columns(raw: TypedPart, num: list[int], cat: list[int]) -> TypedPart:
    return TypedPart(raw.num[:, num], raw.codes[:, cat], raw.index, raw.dropped)


def _without(spec: VariableSpec, stats: list[_PartStats], raws: list[Any], run, drop, keep):
    """The spec, statistics and typed partitions without the columns ``drop``."""
    gone = set(drop)
    num = [j for j, c in enumerate(spec.numeric_names) if c not in gone]
    cat = [j for j, c in enumerate(spec.categorical_names) if c not in gone]
    spec = replace(
        spec,
        columns=tuple(i for i in spec.columns if i.name not in gone),
        levels={c: lv for c, lv in spec.levels.items() if c not in gone},
        codes=None
        if spec.codes is None
        else {c: v for c, v in spec.codes.items() if c not in gone},
        dropped_constant=tuple(drop),
    )
    stats = [
        s._replace(
            cnt=s.cnt[num],
            sum=s.sum[num],
            lo=s.lo[num],
            hi=s.hi[num],
            levels=[s.levels[j] for j in cat],
        )
        for s in stats
    ]
    return spec, stats, run.map(_keep_columns, raws, num, cat, keep=keep)


def _warn_small(n: int, n_cols: int) -> None:
    warnings.warn(
        f"the Dask DataFrame holds {n:,} rows x {n_cols} columns, small enough for "
        f"memory: on a cluster every pass of the fit is a round trip, so the in-memory "
        f"call is faster at this size. Pass backend='numpy' (computes the frame into "
        f"memory) or call the method on ddf.compute().",
        PerformanceWarning,
        stacklevel=user_stacklevel(),
    )


def read_dask(
    x: Any,
    data: Any,
    *,
    categorical: Any,
    numeric: Any,
    missing: str,
    constant: str = "drop",
    allow_categorical: bool = True,
    sample_rows: int = 2000,
) -> DaskRead:
    """Read a Dask DataFrame into typed partitions (numeric block + integer codes).

    The kinds are detected on the first ``sample_rows`` rows with the in-memory
    front; the levels of every categorical variable are then fixed over all
    partitions; every partition is read with that one spec (unknown values,
    unsupported dtypes and infinite values raise as in memory) and kept on the
    workers (or computed here without a client). Constant columns are dropped with a
    DataWarning (``constant="drop"``; on Dask also a constant column a formula names),
    kept (``"keep"``) or an error (``"raise"``). Returns a :class:`DaskRead`.
    """
    formula, ddf = _frame_of(x, data)
    client = _client()
    run = _Runner(client)
    head = ddf.head(sample_rows, npartitions=-1, compute=True)
    parts = ddf.to_delayed()
    if client is not None:  # the partitions, computed once on the workers
        parts = client.compute(parts)
    t0 = _head_spec(formula, ddf, head, categorical, numeric, allow_categorical, run, parts)
    spec = replace(t0.spec, levels=_levels_over_parts(t0, ddf, head, run, parts))
    n_levels = [len(spec.levels[c]) for c in spec.categorical_names]
    raws = (
        run.map(_read_part, parts, spec, missing, keep=True)
        if client is not None
        else run.map(_read_part, parts, spec, missing)
    )
    del parts  # the pandas partitions go as soon as their typed copies exist
    stats = run.map(_raw_stats, raws, n_levels)
    drop = _check_read(spec, stats, constant)
    if drop:
        warn_constant(drop)
        spec, stats, raws = _without(spec, stats, raws, run, drop, keep=client is not None)
        n_levels = [len(spec.levels[c]) for c in spec.categorical_names]
    n = int(sum(s.n for s in stats))
    P, Q = len(spec.numeric_names), len(spec.categorical_names)
    if client is not None and n * (P + Q) <= SMALL_CELLS:
        _warn_small(n, P + Q)
    aux = (
        client.gather([client.submit(_index_of, r, pure=False) for r in raws])
        if client is not None
        else [_index_of(r) for r in raws]
    )
    return DaskRead(
        spec=spec,
        raws=raws,
        run=run,
        client=client,
        n=n,
        sizes=[s.n for s in stats],
        cnt=np.sum([s.cnt for s in stats], axis=0) if P else np.zeros(0),
        sum=np.sum([s.sum for s in stats], axis=0) if P else np.zeros(0),
        lv_counts=[np.sum([s.levels[j] for s in stats], axis=0) for j in range(Q)],
        n_levels=n_levels,
        parts=aux,
        ddf=ddf,
    )


def center_scale(rd: DaskRead) -> tuple[np.ndarray, np.ndarray]:
    """Column means and sds (ddof=1) of the numeric variables over all rows (an sd
    whose squared deviations underflow is recomputed from scaled deviations, as
    :func:`~sparseclust._data.stages.repair_sd` does in memory; a zero sd counts as 1)."""
    cnt = rd.cnt
    center = rd.sum / cnt
    ss = np.sum(rd.run.map(_sq_dev, rd.raws, center), axis=0)
    sd = np.sqrt(ss / np.maximum(cnt - 1, 1))
    small = np.flatnonzero((sd < SMALL_SD) & (cnt > 1))
    if small.size:  # scale before squaring: a column of magnitude 1e-300 is standardised
        top = np.max(rd.run.map(_max_dev, rd.raws, center, small), axis=0)
        top = np.where(top > 0, top, 1.0)
        ss = np.sum(rd.run.map(_sq_dev_scaled, rd.raws, center, small, top), axis=0)
        sd[small] = top * np.sqrt(ss / (cnt[small] - 1))
    return center, np.where(sd > 0, sd, 1.0)


def scaled_blocks(
    rd: DaskRead, block: Callable[..., Any], scale: bool, *args: Any
) -> tuple[DaskRead, list[Any], np.ndarray | None, np.ndarray | None]:
    """A method's blocks, ``block(raw, center, sd, *args)`` of every typed partition (on
    the workers with a client): ``center`` / ``sd`` the numeric variables' means and sds
    (:func:`center_scale`) when ``scale`` and there are numeric variables, else ``None``.

    Returns the read without its typed partitions (they go as soon as their blocks
    exist), the blocks, ``center`` and ``sd``.
    """
    center = sd = None
    if scale and rd.spec.numeric_names:
        center, sd = center_scale(rd)
    blocks = rd.run.map(block, rd.raws, center, sd, *args, keep=rd.client is not None)
    return replace(rd, raws=None), blocks, center, sd


def block_executor(rd: DaskRead, blocks: list[Any], split: Any = None) -> Any:
    """The executor over a read's blocks: :class:`FutureBlocks` on a cluster, else
    ``LocalBlocks`` (``split(blocks) -> (pieces, sizes)`` cuts them first)."""
    if rd.client is not None:
        return FutureBlocks(rd.client, blocks, rd.sizes)
    if split is None:
        return LocalBlocks(blocks, rd.sizes)
    pieces, piece_sizes = split(blocks)
    return LocalBlocks(pieces, piece_sizes)


def prepared(rd: DaskRead, executor: Any, center, sd, **extra: Any) -> DaskPrepared:
    """The :class:`DaskPrepared` of a read and its blocks (``extra``: data, names)."""
    return DaskPrepared(
        spec=rd.spec,
        executor=executor,
        center=center,
        scale=sd,
        parts=rd.parts,
        sizes=rd.sizes,
        ddf=rd.ddf,
        **extra,
    )


def _index_of(raw: TypedPart) -> tuple[pd.Index, np.ndarray]:
    return raw.index, raw.dropped


# ------------------------------------------------------------------------ labels
def _label_part(index: pd.Index, dropped: np.ndarray, labels: np.ndarray) -> pd.Series:
    out = pd.Series(pd.array(np.full(len(index), pd.NA), dtype="Int64"), index=index)
    out.iloc[np.flatnonzero(~dropped)] = np.asarray(labels, dtype=np.int64)
    return out.rename("cluster")


def labels_dask(
    prep: DaskPrepared, states: list[Any] | None, labels: Any, key: str | None = "labels"
):
    """The fit's labels as a lazy Dask Series on the input's index and partitions.

    ``states``: on a cluster, each block's final state (its labels, under ``key`` of
    the state dict, or the state itself when ``key`` is None); ``None`` when the
    blocks were here, and then ``labels`` holds all rows' labels in block order.
    """
    import dask
    import dask.dataframe as dd

    ex = prep.executor
    meta = pd.Series(pd.array([], dtype="Int64"), name="cluster")
    parts = []
    if states is not None:  # on the cluster: one state per partition
        client = ex.client
        labs = ex.state_futures(states)
        if key is not None:
            labs = [client.submit(operator.getitem, f, key, pure=False) for f in labs]
        from distributed import wait

        wait(labs)  # in worker memory before the fit returns: no task left running
        for (idx, drop), lab in zip(prep.parts, labs):
            parts.append(dask.delayed(_label_part)(idx, drop, lab))
    else:
        for (idx, drop), a, size in zip(prep.parts, _offsets(prep.sizes), prep.sizes):
            parts.append(dask.delayed(_label_part)(idx, drop, labels[a : a + size]))
    ddf = prep.ddf
    divisions = ddf.divisions if len(parts) == ddf.npartitions else None
    return dd.from_delayed(parts, meta=meta, divisions=divisions, verify_meta=False)


def _offsets(sizes: list[int]) -> list[int]:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
