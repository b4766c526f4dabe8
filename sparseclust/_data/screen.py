"""Column screening: the columns of real tables that would mislead a clustering.

Analysts' tables carry columns a dtype does not describe: identifiers (one string per
row), free-text comments, numbers exported as text (``"12,345.6"``, ``"$1,200"``,
``"12,5 %"``), categoricals with as many levels as rows (cities, products) and integer
codes. Read by dtype alone, each becomes a categorical whose level shares look pure in
every cluster (each level is seen once or twice there), so a method that selects
features (CRAFT) selects it everywhere and the real structure is lost; a method for
numeric data refuses the whole table. The screen stage of
:func:`~sparseclust._data.table.build_table` decides, column by column, from the
column's value counts only (so an in-memory frame and a Dask frame, whose counts are
summed over partitions, get the same decisions):

* **numbers stored as text** (a text column whose non-missing values parse as numbers,
  at least :data:`PARSE_SHARE` of them, as R's ``readr::parse_number`` reads them:
  grouping marks, currency signs, a percent sign, surrounding spaces; the decimal comma
  only where it is unambiguous, i.e. where it parses more values than the decimal
  point): read as numbers; values that are not numbers become missing and are counted.
  Text with leading zeros (``"02139"``) is a code, not a number, and is not parsed. A
  column where between half and :data:`PARSE_SHARE` of the values parse stays
  categorical, with a warning;
* **identifiers and free text** (a text or categorical column with many levels, see
  below, whose non-missing values are at least :data:`ID_SHARE` distinct, or whose
  values are sentences: a median of :data:`TEXT_WORDS` words or more): dropped;
* **many-level categoricals** (more than ``max(10, sqrt(n))`` levels over ``n``
  non-missing values): the levels seen in fewer than ``lump_min`` rows are lumped into
  one level ``"(other)"``, as forcats' ``fct_lump_min``; ``lump_min="auto"`` is
  ``ceil(n / max(10, sqrt(n)))``, the count every level would have if the column had
  exactly the threshold's number of equal levels. When no level is common enough
  (lumping would leave one level) the column is dropped;
* **integer codes** (an integer column whose 3 to :data:`CODE_VALUES` distinct values
  form the run ``0..k`` or ``1..k``, seen 10 times each on average: a code or a rating
  scale): read as numbers, as R does, and named in a warning (``categorical=`` reads
  them as codes).

Each decision is a :class:`~sparseclust.exceptions.DataWarning` naming the columns,
what was done, why, and how to undo it; it is kept on the spec
(:attr:`~sparseclust.VariableSpec.screening`) and so on every result. A column the user
named (``categorical=``, ``numeric=``, a term written in a formula) is never screened:
it is read as named. ``screen=False`` switches the stage off.
"""

from __future__ import annotations

import contextvars
import functools
import math
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as pdt

from ..exceptions import DataWarning
from .dtypes import densify
from .numbers import _CURRENCY, _SPACES, NA_TEXT, column_unit, parse_numbers
from .params import user_stacklevel

__all__ = [
    "CODE_VALUES",
    "ID_SHARE",
    "OTHER",
    "PARSE_SHARE",
    "TEXT_WORDS",
    "ColumnDecision",
    "ColumnStats",
    "ScreenOptions",
    "column_stats",
    "decide",
    "lump_values",
    "many_levels",
    "screen_options",
    "screens",
    "warn_decisions",
]

#: Share of distinct values among a many-level column's non-missing values from which it
#: is an identifier.
ID_SHARE = 0.9
#: Median number of words per value from which a many-level text column is free text.
TEXT_WORDS = 3
#: Share of a text column's non-missing values that must parse as numbers for the
#: column to be read as numbers (between 0.5 and this share: kept, with a warning).
PARSE_SHARE = 0.9
#: Most distinct values of an integer column named as a possible code.
CODE_VALUES = 10
#: The level rare levels are lumped into.
OTHER = "(other)"
_LEADING_ZERO = re.compile(r"^[+-]?0\d")


@dataclass(frozen=True)
class ScreenOptions:
    """What the screen stage does: ``enabled`` (``screen=False`` switches it off) and
    ``lump_min`` (``"auto"``, an int >= 1, or ``None``: no lumping)."""

    enabled: bool = True
    lump_min: int | str | None = "auto"


def screen_options(screen: Any) -> ScreenOptions:
    """``screen=`` as given to a public function: ``True``, ``False``, or a mapping of
    options (``{"lump_min": 20}``).

    Examples
    --------
    >>> screen_options(True)
    ScreenOptions(enabled=True, lump_min='auto')
    >>> screen_options({"lump_min": 5}).lump_min
    5
    >>> screen_options({"lumpmin": 5})
    Traceback (most recent call last):
    ...
    ValueError: screen= options are 'lump_min'; got ['lumpmin']. Use e.g. screen={'lump_min': 20}, screen=True or screen=False.
    """
    if isinstance(screen, ScreenOptions):
        return screen
    if isinstance(screen, bool | np.bool_):
        return ScreenOptions(enabled=bool(screen))
    if isinstance(screen, Mapping):
        unknown = [k for k in screen if k != "lump_min"]
        if unknown:
            raise ValueError(
                f"screen= options are 'lump_min'; got {unknown}. Use e.g. "
                "screen={'lump_min': 20}, screen=True or screen=False."
            )
        lump = screen.get("lump_min", "auto")
        ok = lump is None or lump == "auto"
        ok = ok or (isinstance(lump, int | np.integer) and not isinstance(lump, bool) and lump >= 1)
        if not ok:
            raise ValueError(
                f"screen={{'lump_min': ...}} must be 'auto', an integer >= 1 or None (no "
                f"lumping); got lump_min={lump!r}."
            )
        return ScreenOptions(True, lump if lump is None or lump == "auto" else int(lump))
    raise TypeError(
        f"screen must be True, False or a dict of options such as {{'lump_min': 20}}; got "
        f"{screen!r}."
    )


_CURRENT: contextvars.ContextVar[ScreenOptions | None] = contextvars.ContextVar(
    "sparseclust_screen", default=None
)


def current_options(screen: Any = None) -> ScreenOptions:
    """``screen`` read as options; ``None``: those of the public call under way
    (:func:`screens`), else the defaults."""
    if screen is not None:
        return screen_options(screen)
    return _CURRENT.get() or ScreenOptions()


@contextmanager
def _using(options: ScreenOptions) -> Iterator[None]:
    token = _CURRENT.set(options)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def screens(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A public function's ``screen=`` keyword, handed to every table it reads: the
    options hold for the call (a context variable, so threads and nested calls keep
    their own), and :func:`~sparseclust._data.table.build_table` reads them, whichever
    path (in memory, Dask, the permutation fits) builds the table."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = screen_options(kwargs.get("screen", True))
        with _using(options):
            return fn(*args, **kwargs)

    return wrapper


@dataclass(frozen=True)
class ColumnStats:
    """What the screen reads of a column: its rows, missing cells and value counts.

    Attributes
    ----------
    n_rows : int
        Rows of the column.
    counts : Series
        Non-missing value -> rows holding it (any order).
    family : str
        ``"text"`` (str / object of strings), ``"category"`` (pandas category),
        ``"integer"``, or ``"other"`` (floats, booleans, mixed objects: never screened).
    """

    n_rows: int
    counts: pd.Series
    family: str

    @property
    def n_obs(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: ColumnStats) -> ColumnStats:
        """The stats of two pieces of one column (Dask partitions)."""
        counts = self.counts.add(other.counts, fill_value=0).astype(np.int64)
        return ColumnStats(self.n_rows + other.n_rows, counts, self.family)


def family(s: pd.Series) -> str:
    """The screen's name for a column's dtype (see :class:`ColumnStats`).

    Examples
    --------
    >>> family(pd.Series(["a"])), family(pd.Series([1])), family(pd.Series([1.5]))
    ('text', 'integer', 'other')
    """
    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return "category"
    if pdt.is_bool_dtype(dt):
        return "other"
    if pdt.is_integer_dtype(dt):
        return "integer"
    if pdt.is_string_dtype(dt):  # str, string, object
        return "text"
    return "other"


def column_stats(s: pd.Series) -> ColumnStats:
    """The :class:`ColumnStats` of one in-memory column.

    Examples
    --------
    >>> st = column_stats(pd.Series(["a", "b", None, "a"]))
    >>> st.n_rows, st.n_obs, st.family, st.counts.to_dict()
    (4, 3, 'text', {'a': 2, 'b': 1})
    """
    s = densify(s)
    fam = family(s)
    if fam == "text" and pdt.is_object_dtype(s.dtype):
        present = s.dropna()
        if not present.map(lambda v: isinstance(v, str)).all():
            fam = "other"  # numbers, booleans or a mix held as objects: read by dtype
    if fam == "other":
        return ColumnStats(len(s), pd.Series([], dtype=np.int64), fam)
    counts = s.value_counts(dropna=True, sort=False)
    if fam == "category":
        counts = counts[counts > 0]
    return ColumnStats(len(s), counts.astype(np.int64), fam)


def many_levels(n_levels: int, n_obs: int) -> bool:
    """Whether a categorical has many levels for its rows: more than
    ``max(10, sqrt(n_obs))``.

    Examples
    --------
    >>> many_levels(60, 600), many_levels(20, 600), many_levels(41, 48842)
    (True, False, False)
    """
    return n_levels > max(10.0, math.sqrt(n_obs))


def auto_lump_min(n_obs: int) -> int:
    """``lump_min="auto"``: ``ceil(n_obs / max(10, sqrt(n_obs)))``.

    Examples
    --------
    >>> auto_lump_min(600), auto_lump_min(50)
    (25, 5)
    """
    return max(1, math.ceil(n_obs / max(10.0, math.sqrt(n_obs))))


def _is_na_text(index: pd.Index) -> np.ndarray:
    return np.array([str(v).strip(_SPACES).lower() in NA_TEXT for v in index], dtype=bool)


# ------------------------------------------------------------------ decisions
@dataclass(frozen=True)
class ColumnDecision:
    """What the screen did with one column, and why.

    Attributes
    ----------
    name : str
        The column.
    action : str
        ``"parsed"`` (numbers stored as text, read as numbers), ``"dropped"``
        (identifier, free text, or a many-level column with no common level),
        ``"lumped"`` (rare levels into ``"(other)"``), ``"kept"`` (a text column that
        looks numeric but too few values parse; read as categorical) or ``"noted"``
        (integer codes, read as numbers).
    why : str
        ``"numbers as text"``, ``"identifier"``, ``"free text"``, ``"many levels"``,
        ``"mostly numbers"`` or ``"integer code"``.
    detail : str
        The evidence, in words (distinct values, rows, what was parsed or lumped).
    undo : str
        How to have the column read otherwise.
    decimal : str or None
        The decimal mark of a parsed column (new data are parsed the same way).
    unit : str or None
        The unit written after a parsed column's numbers, removed (``"g"`` of
        ``"3,750 g"``).
    keep_levels : tuple
        The levels kept by lumping (every other value reads as ``"(other)"``).
    n_distinct, n_obs, n_rows : int
        The column's distinct values, non-missing and all rows.
    """

    name: str
    action: str
    why: str
    detail: str
    undo: str
    decimal: str | None = None
    unit: str | None = None
    keep_levels: tuple = ()
    n_distinct: int = 0
    n_obs: int = 0
    n_rows: int = 0
    examples: tuple = field(default=(), compare=False)


def decide(name: str, stats: ColumnStats, options: ScreenOptions) -> ColumnDecision | None:
    """The screen's decision on one column not named by the user (``None``: read it by
    its dtype, nothing to say).

    Examples
    --------
    >>> ids = pd.Series([f"C{i:05d}" for i in range(100)])
    >>> decide("id", column_stats(ids), ScreenOptions()).action
    'dropped'
    >>> money = pd.Series([f"{1000 * i:,}.5" for i in range(100)])
    >>> d = decide("spend", column_stats(money), ScreenOptions())
    >>> d.action, d.decimal
    ('parsed', '.')
    >>> decide("g", column_stats(pd.Series(list("abcab") * 20)), ScreenOptions()) is None
    True
    """
    if not options.enabled or stats.family == "other" or stats.counts.empty:
        return None
    stats = ColumnStats(stats.n_rows, _canonical(stats.counts), stats.family)
    n_distinct, n_obs, n_rows = len(stats.counts), stats.n_obs, stats.n_rows
    base = {"n_distinct": n_distinct, "n_obs": n_obs, "n_rows": n_rows}
    if stats.family == "integer":
        if _code_like(stats.counts.index, n_obs):
            return ColumnDecision(
                name,
                "noted",
                "integer code",
                f"{n_distinct} distinct integers",
                f"categorical=[{name!r}] reads them as codes; numeric=[{name!r}] keeps them "
                "numeric without this note",
                **base,
            )
        return None
    if stats.family == "text":
        parsed = _decide_parse(name, stats, base)
        if parsed is not None and parsed.action == "parsed":
            return parsed
    else:
        parsed = None
    return _decide_levels(name, stats, options, base) or parsed


def _code_like(values: pd.Index, n_obs: int) -> bool:
    """Integers that read as a code or a rating scale: 3 to :data:`CODE_VALUES` values
    forming the run ``0..k`` or ``1..k``, each seen about 10 times or more on average
    (``n_obs >= 10 k``). Years (2007-2009) and counts with gaps (legs: 0, 2, 4, 6, 8)
    are not."""
    k = len(values)
    if not 3 <= k <= CODE_VALUES or n_obs < 10 * k:
        return False
    v = np.sort(np.asarray(values, dtype=np.int64))
    return bool(v[0] in (0, 1) and v[-1] - v[0] == k - 1)


def _canonical(counts: pd.Series) -> pd.Series:
    """The counts in one order whatever order they were counted in (most frequent
    first, then by value), so that the examples a decision quotes are the same in
    memory and on Dask."""
    try:
        by_value = counts.sort_index(kind="stable")
    except TypeError:  # values of mixed types: by their text
        text = pd.Index(counts.index.map(str), dtype=object)
        by_value = counts.iloc[np.argsort(text.to_numpy(), kind="stable")]
    return by_value.sort_values(ascending=False, kind="stable")


def _decide_parse(name: str, stats: ColumnStats, base: dict) -> ColumnDecision | None:
    values = stats.counts.index
    counts = stats.counts.to_numpy()
    na_text = _is_na_text(values)
    real = ~na_text
    n_real = int(counts[real].sum())
    if n_real == 0:
        return None
    unit = column_unit(list(values[real]))
    nums, dec = parse_numbers(pd.Series(values.to_numpy(dtype=object)), unit=unit)
    ok = np.isfinite(nums) & real
    share = float(counts[ok].sum()) / n_real
    if share < 0.5:
        return None
    text = pd.Series(values.to_numpy(dtype=object)).astype(str).str.strip(_SPACES)
    lead = text.str.replace(f"[{re.escape(_CURRENCY)}]", "", regex=True)
    lead = lead.str.contains(_LEADING_ZERO, regex=True).to_numpy(dtype=bool) & ok
    bad = [str(v) for v in values[real & ~ok][:3]]
    if lead.any():
        return None  # codes with leading zeros ("02139"): text, screened as levels
    n_bad = int(counts[real & ~ok].sum())
    marks = "decimal comma" if dec == "," else "decimal point"
    if unit:
        marks += f" and the unit {unit!r} removed"
    examples = tuple(str(v) for v in values[ok][:2])
    if share >= PARSE_SHARE:
        lost = f"; {n_bad} value(s) that are not numbers set missing ({bad})" if n_bad else ""
        return ColumnDecision(
            name,
            "parsed",
            "numbers as text",
            f"{share:.0%} of the values are numbers, with a {marks}, e.g. "
            f"{', '.join(repr(e) for e in examples)}{lost}",
            f"categorical=[{name!r}] keeps the text as categories",
            decimal=dec,
            unit=unit,
            examples=examples,
            **base,
        )
    return ColumnDecision(
        name,
        "kept",
        "mostly numbers",
        f"only {share:.0%} of the values parse as numbers (not: {bad})",
        f"numeric=[{name!r}] reads them as numbers (the others become missing)",
        decimal=dec,
        examples=examples,
        **base,
    )


def _decide_levels(
    name: str, stats: ColumnStats, options: ScreenOptions, base: dict
) -> ColumnDecision | None:
    counts = stats.counts
    n_levels, n_obs = len(counts), stats.n_obs
    if not many_levels(n_levels, n_obs):
        return None
    undo_keep = f"categorical=[{name!r}] keeps it with every level"
    if n_levels >= ID_SHARE * n_obs:
        return ColumnDecision(
            name,
            "dropped",
            _text_or_id(counts),
            f"{n_levels} distinct values in {n_obs} rows",
            undo_keep,
            **base,
        )
    if stats.family == "text" and _text_or_id(counts) == "free text":
        return ColumnDecision(
            name,
            "dropped",
            "free text",
            f"{n_levels} distinct values in {n_obs} rows, sentences rather than levels",
            undo_keep,
            **base,
        )
    if options.lump_min is None:
        return None
    lump_min = auto_lump_min(n_obs) if options.lump_min == "auto" else int(options.lump_min)
    keep = counts[counts >= lump_min]
    n_rare = n_levels - len(keep)
    if n_rare == 0:
        return None
    shown = f"{n_levels} levels in {n_obs} rows"
    if len(keep) == 0:
        return ColumnDecision(
            name,
            "dropped",
            "many levels",
            f"{shown}, none seen in lump_min={lump_min} rows or more",
            f"{undo_keep}; screen={{'lump_min': ...}} sets the rarity",
            **base,
        )
    kept = tuple(_ordered(keep.index))
    return ColumnDecision(
        name,
        "lumped",
        "many levels",
        f"{shown}: {n_rare} levels seen in fewer than {lump_min} rows "
        f"({int(counts.sum() - keep.sum())} rows) lumped into {OTHER!r}, {len(kept)} kept",
        f"{undo_keep}; screen={{'lump_min': ...}} sets the rarity",
        keep_levels=kept,
        **base,
    )


def _ordered(values: pd.Index) -> list:
    from .dtypes import _sorted_levels

    return _sorted_levels(list(values))


def _text_or_id(counts: pd.Series) -> str:
    """``"free text"`` when the values' median number of words is :data:`TEXT_WORDS` or
    more, else ``"identifier"``."""
    sample = pd.Series(counts.index[:2000].to_numpy(dtype=object)).astype(str)
    words = sample.str.split().str.len()
    return "free text" if float(words.median()) >= TEXT_WORDS else "identifier"


# ------------------------------------------------------------------ applying
def apply_parse(s: pd.Series, decimal: str, unit: str | None = None) -> pd.Series:
    """A parsed column: numbers as float64 (NaN where the text is not a number).

    Examples
    --------
    >>> apply_parse(pd.Series(["1,5", None, "x"], index=[7, 8, 9]), ",").tolist()
    [1.5, nan, nan]
    """
    s = densify(s)
    x, _ = parse_numbers(s, decimal, unit)
    return pd.Series(x, index=s.index, name=s.name)


def lump_values(s: pd.Series, keep_levels: Sequence) -> pd.Series:
    """A lumped column: the kept levels as they are, every other value ``"(other)"``,
    missing cells missing; a categorical with the kept levels then ``"(other)"``.

    Examples
    --------
    >>> lump_values(pd.Series(["a", "b", "c", None, "a"]), ["a"]).tolist()
    ['a', '(other)', '(other)', nan, 'a']
    """
    s = densify(s)
    values = s.to_numpy(dtype=object)
    present = s.notna().to_numpy()
    keep = pd.Index(list(keep_levels), dtype=object)
    inside = keep.get_indexer(values) >= 0
    out = np.where(present & ~inside, OTHER, values)
    out = np.where(present, out, None)
    dtype = pd.CategoricalDtype([*keep_levels, OTHER])
    return pd.Series(pd.Categorical(out, dtype=dtype), index=s.index, name=s.name)


def apply_decision(s: pd.Series, d: ColumnDecision) -> pd.Series:
    """The column as the decision reads it (parsed, lumped, or as it is)."""
    if d.action == "parsed":
        return apply_parse(s, d.decimal or ".", d.unit)
    if d.action == "lumped":
        return lump_values(s, d.keep_levels)
    return s


# ------------------------------------------------------------------ reporting
_HEADS = {
    ("dropped", "identifier"): "look like identifiers (a distinct value on nearly every "
    "row cannot group rows) and were dropped",
    ("dropped", "free text"): "hold free text (each value is a level of its own) and were dropped",
    ("dropped", "many levels"): "have too many levels for the rows (a level seen once or "
    "twice looks pure in any cluster) and no common level; they were dropped",
    ("lumped", "many levels"): "have many levels for the rows (a level seen once or twice "
    "looks pure in any cluster); their rare levels were lumped into '(other)'",
    ("parsed", "numbers as text"): "hold numbers stored as text and were read as numbers",
    ("kept", "mostly numbers"): "look like numbers stored as text, but too many values do "
    "not parse; they were read as categories",
    ("noted", "integer code"): "hold integers with few distinct values (codes or ratings?) "
    "and were read as numbers, as in R",
}


def decision_message(group: Sequence[ColumnDecision]) -> str:
    """One warning's text for the decisions of one kind."""
    d0 = group[0]
    names = [d.name for d in group]
    details = "; ".join(f"{d.name}: {d.detail}" for d in group[:5])
    more = f"; and {len(group) - 5} more" if len(group) > 5 else ""
    undo = "; ".join(d.undo for d in group[:3])
    return f"Columns {names} {_HEADS[(d0.action, d0.why)]} ({details}{more}). To undo: {undo}."


def warn_decisions(decisions: Sequence[ColumnDecision]) -> None:
    """One :class:`~sparseclust.exceptions.DataWarning` per kind of decision."""
    groups: dict[tuple[str, str], list[ColumnDecision]] = {}
    for d in decisions:
        groups.setdefault((d.action, d.why), []).append(d)
    for group in groups.values():
        warnings.warn(decision_message(group), DataWarning, stacklevel=user_stacklevel())


def decisions_frame(decisions: Sequence[ColumnDecision]) -> pd.DataFrame:
    """The decisions as a table: one row per screened column.

    Examples
    --------
    >>> d = ColumnDecision("id", "dropped", "identifier", "9 distinct", "categorical=['id']")
    >>> decisions_frame([d]).loc["id", "action"]
    'dropped'
    """
    return pd.DataFrame(
        {
            "action": [d.action for d in decisions],
            "why": [d.why for d in decisions],
            "detail": [d.detail for d in decisions],
            "undo": [d.undo for d in decisions],
        },
        index=pd.Index([d.name for d in decisions], name="column", dtype=object),
    )


# ------------------------------------------------------------------ the stage
def screen_columns(
    var: Any,
    types: Any,
    options: ScreenOptions,
    *,
    stats: Mapping[str, ColumnStats] | None = None,
) -> tuple[Any, Any, tuple[ColumnDecision, ...]]:
    """Stage 4b of :func:`~sparseclust._data.table.build_table`: screen the variables
    whose kind was detected (not named by ``categorical=`` / ``numeric=`` / ``C()`` /
    ``N()``) and, with a formula, only those ``.`` expanded to. Returns the variables and
    kinds with the decisions applied (parsed columns numeric, lumped ones categorical
    with ``"(other)"``, dropped ones gone) and the decisions, after warning of them.
    ``stats``: the columns' statistics when the rows are not all in ``var`` (a Dask
    frame's, summed over its partitions).

    Examples
    --------
    >>> from sparseclust._data.stages import Overrides, Variables, detect_types
    >>> df = pd.DataFrame({"id": [f"r{i}" for i in range(40)], "x": np.arange(40.0)})
    >>> var = Variables(df)
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     var, types, done = screen_columns(var, detect_types(df, Overrides()), ScreenOptions())
    >>> types.names, [(d.name, d.action, d.why) for d in done]
    (['x'], [('id', 'dropped', 'identifier')])
    >>> print(seen[0].message)  # doctest: +ELLIPSIS
    Columns ['id'] look like identifiers ... To undo: categorical=['id'] keeps it with every level.
    """
    from .stages import remove_variables

    if not options.enabled:
        return var, types, ()
    written = set()
    if var.parsed is not None:
        written = set(types.names) - set(var.parsed.dotted)
    decisions = []
    plain = set(types.plain)
    dtypes = dict(zip(var.frame.columns.tolist(), var.frame.dtypes.tolist(), strict=True))
    for info in types.infos:
        c = info.name
        if info.reason != "detected" or c in written:
            continue
        if c in plain and np.dtype(dtypes[c]).kind not in "iu":
            continue  # plain floats: nothing to screen
        st = stats[c] if stats is not None and c in stats else column_stats(var.frame[c])
        d = decide(c, st, options)
        if d is not None:
            decisions.append(d)
    if not decisions:
        return var, types, ()
    gone = [d.name for d in decisions if d.action == "dropped"]
    if len(gone) == len(types.names):
        raise ValueError(
            f"every column was screened out ({decision_message(decisions)}); there is "
            "nothing left to cluster on. Name the columns to keep with categorical= or "
            "numeric=, or pass screen=False."
        )
    warn_decisions(decisions)
    var, types = _applied(var, types, decisions)
    if gone:
        var, types = remove_variables(var, types, gone)
    return var, types, tuple(decisions)


def _applied(var: Any, types: Any, decisions: Sequence[ColumnDecision]) -> tuple[Any, Any]:
    """Parsed and lumped columns replaced in the frame and the kinds (new objects: the
    caller's frame is not touched)."""
    from dataclasses import replace

    from .dtypes import ColumnInfo

    changed = {d.name: d for d in decisions if d.action in ("parsed", "lumped")}
    if not changed:
        return var, types
    frame = var.frame.copy(deep=False)
    series = dict(types.series)
    infos = []
    for info in types.infos:
        d = changed.get(info.name)
        if d is None:
            infos.append(info)
            continue
        new = apply_decision(var.frame[info.name], d)
        frame[info.name] = new
        series[info.name] = new
        kind = "numeric" if d.action == "parsed" else "categorical"
        infos.append(ColumnInfo(info.name, info.dtype, kind, d.action, False))
    types = replace(types, infos=tuple(infos), series=series)
    return replace(var, frame=frame), types
