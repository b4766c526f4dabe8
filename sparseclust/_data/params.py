"""Parameter rules for the public entry points, declared once and checked in one place.

Each public function declares its parameters' rules as data with :func:`rules`
(``@rules(k=Int(min=2), init=Choice(("mean", "random")))``); the decorator checks
every declared parameter before the body runs and hands it the normalised value.
Every message names the parameter, gives the value received and the requirement,
and ends with a fix; the ``check_*`` helpers build them (rules that depend on other
arguments or on the data, e.g. ``k <= n_obs``, are checked in the body with the same
helpers). ``tests/_data/test_params.py`` is generated from the declarations: it feeds every
rule its :meth:`Rule.bad_values` through every function that declares it.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import numbers
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "KEYWORD_SPELLINGS",
    "Choice",
    "Columns",
    "Flag",
    "Int",
    "Number",
    "Rule",
    "Seed",
    "Spelling",
    "Numbers",
    "Progress",
    "Workers",
    "interactive",
    "rules",
    "as_rng",
    "check_bool",
    "check_choice",
    "check_int",
    "check_names",
    "check_number",
    "declare_public",
    "given_arguments",
    "unknown_keywords_message",
    "written",
    "user_stacklevel",
]


def _show(value: Any) -> str:
    """``repr`` of a value, with numpy scalars shown as plain Python numbers."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def check_int(name: str, value: Any, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as ``int`` after checking it is an integer in ``[min, max]``.

    Examples
    --------
    >>> check_int("k", 3, min=1)
    3
    >>> check_int("k", 0, min=1)
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer >= 1; got k=0.
    """
    bounds = _bounds_text(min, max)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        if (
            not isinstance(value, bool | np.bool_)
            and isinstance(value, numbers.Real)
            and float(value).is_integer()
        ):
            value = int(value)
        else:
            raise TypeError(
                f"{name} must be an integer{bounds}; got {name}={_show(value)} of type "
                f"{type(value).__name__}."
            )
    value = int(value)
    if (min is not None and value < min) or (max is not None and value > max):
        raise ValueError(f"{name} must be an integer{bounds}; got {name}={value}.")
    return value


def check_number(
    name: str,
    value: Any,
    *,
    min: float | None = None,
    max: float | None = None,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite ``float`` inside the stated range.

    Examples
    --------
    >>> check_number("lam", 2, min=0, min_inclusive=False)
    2.0
    >>> check_number("lam", -1, min=0, min_inclusive=False)
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite number > 0; got lam=-1.
    >>> check_number("lam", np.float64(-1.5), min=0)
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite number >= 0; got lam=-1.5.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a finite number{_range_text(min, max, min_inclusive, max_inclusive)}; "
            f"got {name}={_show(value)} of type {type(value).__name__}."
        )
    x = float(value)
    bad = not np.isfinite(x)
    if min is not None:
        bad |= x < min if min_inclusive else x <= min
    if max is not None:
        bad |= x > max if max_inclusive else x >= max
    if bad:
        raise ValueError(
            f"{name} must be a finite number{_range_text(min, max, min_inclusive, max_inclusive)}; "
            f"got {name}={_show(value)}."
        )
    return x


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """Check that ``value`` is one of ``choices`` (strings).

    Examples
    --------
    >>> check_choice("init", "mean", ["mean", "random"])
    'mean'
    >>> check_choice("init", "kmeans++", ["mean", "random"])
    Traceback (most recent call last):
    ...
    ValueError: init must be one of 'mean', 'random'; got init='kmeans++'.
    """
    if not isinstance(value, str) or value not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {opts}; got {name}={_show(value)}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Check that ``value`` is a boolean (Python or numpy)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {name}={_show(value)}.")
    return bool(value)


def check_names(name: str, value: Any) -> list[str] | None:
    """Normalise a column-name list argument (None, one name or an iterable of names).

    Names are returned as strings (the data front names every column by ``str(label)``),
    so integer column labels such as ``0`` may be given as ``0`` or ``"0"``.

    Examples
    --------
    >>> check_names("categorical", "sex")
    ['sex']
    >>> check_names("numeric", [0, "age"])
    ['0', 'age']
    >>> check_names("numeric", 3.5)
    Traceback (most recent call last):
    ...
    TypeError: numeric must be a column name or a list of column names; got numeric=3.5. Use e.g. numeric=['age', 'income'].
    """
    if value is None:
        return None
    if _is_label(value):
        return [str(value)]
    if not isinstance(value, Iterable) or isinstance(value, bytes | dict):
        raise TypeError(
            f"{name} must be a column name or a list of column names; got {name}={_show(value)}. "
            f"Use e.g. {name}=['age', 'income']."
        )
    out = list(value)
    for v in out:
        if not _is_label(v):
            raise TypeError(
                f"{name} must be a list of column names (strings); got {_show(v)} in "
                f"{name}={out!r}. Use the column names, not positions or masks."
            )
    return [str(v) for v in out]


def _is_label(v: Any) -> bool:
    return isinstance(v, str) or (
        isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)
    )


def as_rng(rng: Any) -> np.random.Generator:
    """Normalise ``rng`` (None, int, SeedSequence or Generator) to a Generator (SPEC 7).

    Examples
    --------
    >>> g = as_rng(0)
    >>> isinstance(g, np.random.Generator)
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool | np.bool_):
        if int(rng) < 0:
            raise ValueError(
                f"rng must be a non-negative integer seed; got rng={int(rng)}. Use e.g. rng=0."
            )
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator; got rng={_show(rng)}. "
        "Use rng=0 for a reproducible run."
    )


def _bounds_text(min: Any, max: Any) -> str:
    if min is not None and max is not None:
        return f" in [{min}, {max}]"
    if min is not None:
        return f" >= {min}"
    if max is not None:
        return f" <= {max}"
    return ""


def _range_text(min: Any, max: Any, min_inc: bool, max_inc: bool) -> str:
    parts = []
    if min is not None:
        parts.append(f"{'>=' if min_inc else '>'} {min}")
    if max is not None:
        parts.append(f"{'<=' if max_inc else '<'} {max}")
    return (" " + " and ".join(parts)) if parts else ""


def user_stacklevel() -> int:
    """Stack level of the first frame outside the sparseclust package.

    Pass it as ``stacklevel=`` to ``warnings.warn`` called directly from a sparseclust
    function, so the warning points at the user's line.
    """
    frame = inspect.currentframe()
    level = 0  # this frame; 1 is the caller of warnings.warn
    while frame is not None:
        if not is_package_module(frame.f_globals.get("__name__", "")):
            return level
        frame = frame.f_back
        level += 1
    return 2


def is_package_module(module_name: str) -> bool:
    """Whether ``module_name`` is sparseclust or one of its submodules (not ``sparseclust_x``)."""
    return module_name == "sparseclust" or module_name.startswith("sparseclust.")


# ----------------------------------------------------------------- rules as data
class Rule:
    """One parameter's rule: :meth:`check` returns the value normalised or raises a
    ``ValueError``/``TypeError`` that names the parameter, shows the value and says
    what is accepted; :meth:`bad_values` gives values the rule must reject (the
    generated test feeds them to every public function that declares the rule)."""

    none: bool = False
    also: tuple[str, ...] = ()

    def check(self, name: str, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def bad_values(self) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _special(self, value: Any) -> bool:
        """``None`` or one of the accepted strings (``"auto"``...), passed through."""
        return (value is None and self.none) or (isinstance(value, str) and value in self.also)

    def _accepts(self) -> str:
        extra = [repr(a) for a in self.also] + (["None"] if self.none else [])
        return f" (or {', '.join(extra)})" if extra else ""

    def _checked(self, value: Any, check: Callable[[], Any]) -> Any:
        """``value`` itself when special, else ``check()``, whose error then also names
        the special values accepted."""
        if self._special(value):
            return value
        try:
            return check()
        except (TypeError, ValueError) as err:
            if not (self.none or self.also):
                raise
            raise type(err)(_with_alternatives(str(err), self._accepts())) from None


@dataclass(frozen=True)
class Int(Rule):
    """An integer in ``[min, max]`` (a float with an integer value is accepted)."""

    min: int | None = None
    max: int | None = None
    none: bool = False
    also: tuple[str, ...] = ()

    def check(self, name: str, value: Any) -> Any:
        return self._checked(value, lambda: check_int(name, value, min=self.min, max=self.max))

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["x", 1.5, True]
        if self.min is not None:
            bad.append(self.min - 1)
        if self.max is not None:
            bad.append(self.max + 1)
        if not self.none:
            bad.append(None)
        return bad


@dataclass(frozen=True)
class Number(Rule):
    """A finite real number in the stated range."""

    min: float | None = None
    max: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    none: bool = False
    also: tuple[str, ...] = ()

    def check(self, name: str, value: Any) -> Any:
        return self._checked(
            value,
            lambda: check_number(
                name,
                value,
                min=self.min,
                max=self.max,
                min_inclusive=self.min_inclusive,
                max_inclusive=self.max_inclusive,
            ),
        )

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["x", float("nan"), float("inf"), [1.0]]
        if self.min is not None:
            bad.append(self.min - 1 if self.min_inclusive else self.min)
        if self.max is not None:
            bad.append(self.max + 1 if self.max_inclusive else self.max)
        if not self.none:
            bad.append(None)
        return bad


@dataclass(frozen=True)
class Choice(Rule):
    """One of the given strings."""

    choices: tuple[str, ...] = ()
    none: bool = False

    def check(self, name: str, value: Any) -> Any:
        if value is None and self.none:
            return value
        return check_choice(name, value, self.choices)

    def bad_values(self) -> list[Any]:
        return ["no-such-choice", 1] + ([] if self.none else [None])


@dataclass(frozen=True)
class Flag(Rule):
    """``True`` or ``False`` (or ``None`` with ``none=True``: "decide for me")."""

    none: bool = False

    def check(self, name: str, value: Any) -> bool | None:
        return self._checked(value, lambda: check_bool(name, value))

    def bad_values(self) -> list[Any]:
        return ["yes", 2] + ([] if self.none else [None])


@dataclass(frozen=True)
class Columns(Rule):
    """``None``, one column name or a list of names (returned as a list of strings)."""

    def check(self, name: str, value: Any) -> list[str] | None:
        return check_names(name, value)

    def bad_values(self) -> list[Any]:
        return [3.5, [1.5], {"a": 1}]


@dataclass(frozen=True)
class Seed(Rule):
    """``None``, a non-negative int seed, a SeedSequence or a Generator. Checked, and
    passed on unchanged (the function draws from ``as_rng(value)``; the ``Call:``
    line shows the seed the user gave)."""

    def check(self, name: str, value: Any) -> Any:
        as_rng(value)
        return value

    def bad_values(self) -> list[Any]:
        return [-1, "seed", 1.5]


@dataclass(frozen=True, eq=False)
class Spelling(Rule):
    """One of ``choices``, or another spelling of one of them (``spellings``: spelling
    -> choice), returned as the choice. ``lower=True`` compares in lower case.

    The message lists ``choices``, then ``note`` (the other spellings, in words).

    Examples
    --------
    >>> rule = Spelling(("auto", "lloyd"), {"Lloyd": "lloyd"}, lower=True)
    >>> rule.check("algorithm", "LLOYD")
    'lloyd'
    >>> rule.check("algorithm", "elkan")
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of 'auto', 'lloyd'; got algorithm='elkan'.
    """

    choices: tuple[str, ...] = ()
    spellings: Mapping[str, str] = field(default_factory=dict)
    lower: bool = False
    note: str = ""

    def check(self, name: str, value: Any) -> str:
        if isinstance(value, str):
            key = value.lower() if self.lower else value
            if key in self.choices:
                return key
            if key in self.spellings:
                return self.spellings[key]
        if not self.note:
            check_choice(name, value, self.choices)
        opts = ", ".join(repr(c) for c in self.choices)
        raise ValueError(f"{name} must be one of {opts} ({self.note}); got {name}={value!r}.")

    def bad_values(self) -> list[Any]:
        return ["no-such-choice", 1, None]


@dataclass(frozen=True)
class Workers(Rule):
    """``n_jobs``: ``None`` or a non-zero integer (``-1``: all cores), as joblib takes it."""

    def check(self, name: str, value: Any) -> int | None:
        if value is None:
            return None
        n = check_int(name, value)
        if n == 0:
            raise ValueError(f"{name} must be a non-zero integer (or -1 for all cores); got 0.")
        return n

    def bad_values(self) -> list[Any]:
        return ["x", 1.5, True, 0]


@dataclass(frozen=True)
class Numbers(Rule):
    """One number or a sequence of at least ``min_len`` numbers, each finite and in
    the stated range; returned as a 1-D float array (``None`` passed through with
    ``none=True``). A bad item is named by its position, with ``example`` as the fix.

    Examples
    --------
    >>> rule = Numbers(min=1, min_inclusive=False, min_len=2, example="[1.5, 2.0, 3.0]")
    >>> rule.check("wbounds", [2, 3.5]).tolist()
    [2.0, 3.5]
    >>> rule.check("wbounds", "x")
    Traceback (most recent call last):
    ...
    TypeError: wbounds[0] must be a finite number > 1; got wbounds[0]='x' of type str. Use e.g. wbounds=[1.5, 2.0, 3.0].
    """

    min: float | None = None
    min_inclusive: bool = True
    min_len: int = 1
    none: bool = False
    example: str = "[1.5, 2.0]"

    def check(self, name: str, value: Any) -> np.ndarray | None:
        if value is None and self.none:
            return None
        if isinstance(value, np.ndarray) and value.ndim > 1:
            raise ValueError(
                f"{name} must be one number or a 1-D sequence of numbers; got an array of "
                f"shape {value.shape}. Use e.g. {name}={self.example}."
            )
        many = isinstance(value, Iterable) and not isinstance(value, str | bytes | dict)
        items = list(value) if many else [value]
        out = []
        for i, v in enumerate(items):
            try:
                out.append(
                    check_number(f"{name}[{i}]", v, min=self.min, min_inclusive=self.min_inclusive)
                )
            except (TypeError, ValueError) as err:
                raise type(err)(f"{err} Use e.g. {name}={self.example}.") from None
        if len(out) < self.min_len:
            raise ValueError(
                f"{name} must hold at least {self.min_len} numbers; got {name}={_show(value)}. "
                f"Use e.g. {name}={self.example}."
            )
        return np.asarray(out, dtype=np.float64)

    def bad_values(self) -> list[Any]:
        bad: list[Any] = ["x", [2.0, "x"], [2.0, float("nan")], [[2.0, 3.0]], {"a": 2.0}]
        if self.min is not None:
            bad.append([self.min + 1.0, self.min - 1.0 if self.min_inclusive else self.min])
        if self.min_len > 1:
            bad.append([(self.min or 0.0) + 1.0])
        if not self.none:
            bad.append(None)
        return bad


def interactive() -> bool:
    """Whether a person is watching: a Jupyter / IPython kernel, or standard error is
    a terminal (the default of every ``progress=``)."""
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


@dataclass(frozen=True)
class Progress(Rule):
    """``progress=``: True or False, or None (the default): on when :func:`interactive`.
    Every call that can run for more than a few seconds takes it; its bars appear only
    once a run has lasted :data:`sparseclust._engine.parallel.BAR_DELAY` seconds, so
    quick calls print nothing."""

    def check(self, name: str, value: Any) -> bool:
        if value is None:
            return interactive()
        return check_bool(name, value)

    def bad_values(self) -> list[Any]:
        return ["yes", 2]


def _with_alternatives(message: str, alternatives: str) -> str:
    """``"k must be an integer >= 1; got k=0."`` -> ``"k must be an integer >= 1 (or
    None); got k=0."``"""
    head, sep, tail = message.partition("; got ")
    return f"{head}{alternatives}{sep}{tail}" if sep else message + alternatives


#: (decorated function, the declared arguments as the caller wrote them) of the
#: innermost running call: the ``Call:`` line shows what the user wrote, not the
#: normalised values the body receives (``lam=1``, not ``lam=1.0``).
_GIVEN: ContextVar[tuple[Any, dict[str, Any]]] = ContextVar("_GIVEN", default=(None, {}))


def given_arguments(func: Callable[..., Any]) -> dict[str, Any]:
    """The arguments of the running call of ``func`` as the caller passed them (those
    the caller wrote, even when equal to their defaults; empty when ``func`` is not
    the innermost :func:`rules`-checked call)."""
    owner, given = _GIVEN.get()
    return dict(given) if owner is func else {}


def written(name: str) -> bool:
    """Whether the caller of the running :func:`rules`-checked call wrote ``name``
    (also when equal to its default)."""
    return name in _GIVEN.get()[1]


def _interrupted(error: SystemError) -> bool:
    """Whether ``error`` is a Ctrl-C that a compiled kernel turned into a SystemError.

    A SIGINT arriving while a numba-compiled kernel has called back into Python (it
    does, briefly, to unpickle a constant) raises KeyboardInterrupt there; the
    dispatcher then reports "returned a result with an exception set" as a
    SystemError caused by it. The caller pressed Ctrl-C and must get the
    KeyboardInterrupt, not an internal error. (The kernels compiled ahead of time,
    Cython, never call back into Python: a SIGINT is handled when the kernel returns,
    and no SystemError arises; for them this check is never reached.)

    Examples
    --------
    >>> e = SystemError("returned a result with an exception set")
    >>> e.__cause__ = KeyboardInterrupt()
    >>> _interrupted(e), _interrupted(SystemError("other"))
    (True, False)
    >>> outer = SystemError("as136 returned a result with an exception set")
    >>> outer.__cause__ = e  # a kernel called from a kernel: one SystemError per level
    >>> _interrupted(outer)
    True
    """
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


#: Set by Ctrl-C while a public call runs in the main thread (:func:`watch_sigint`).
SIGINT_SEEN = threading.Event()


def _on_sigint(signum: int, frame: Any) -> None:
    SIGINT_SEEN.set()
    signal.default_int_handler(signum, frame)


@contextmanager
def watch_sigint() -> Iterator[threading.Event]:
    """An event set by Ctrl-C while the block runs, and the signal still raising
    KeyboardInterrupt as Python's own handler does.

    A KeyboardInterrupt can be lost on its way up: Python prints and drops one raised
    while the main thread runs a finaliser, and one raised while a compiled kernel had
    called back into Python can be cleared by the kernel's own error handling (the
    call then ran to its end, about 1 time in 20 when signalled inside the
    permutations of ``kmeans_sparse_permute``). The event keeps the signal:
    :func:`check_interrupt` raises it at the next task, and the public boundary when
    the call returns. Only in the main thread, and only when the handler is Python's
    default (a user's own SIGINT handler is left alone: the event then stays unset);
    nested blocks share the outermost one's event.

    Examples
    --------
    >>> with watch_sigint() as seen:
    ...     seen.is_set()
    False
    """
    if signal.getsignal(signal.SIGINT) is _on_sigint:  # inside a watched block
        yield SIGINT_SEEN
        return
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield threading.Event()
        return
    SIGINT_SEEN.clear()
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield SIGINT_SEEN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def check_interrupt() -> None:
    """Raise KeyboardInterrupt when Ctrl-C came during the watched call but its
    exception was lost (:func:`watch_sigint`); called between tasks of long runs.

    Examples
    --------
    >>> check_interrupt()  # no signal: nothing happens
    """
    if SIGINT_SEEN.is_set() and signal.getsignal(signal.SIGINT) is _on_sigint:
        raise KeyboardInterrupt


# ------------------------------------------------------------- unknown keywords
#: Other packages' names of the public functions' parameters (sparcl, R's ``kmeans``,
#: ``hclust`` and ``cluster``, scikit-learn, pysparcl): keyword -> the (parameter, hint)
#: pairs it may mean, tried in order. The first parameter the called function has gives
#: the hint; a pair with parameter ``""`` is the hint for a function that has none of
#: them. ``{fn}``, ``{kw}`` and ``{param}`` are filled in. R's dotted names of the
#: package's own parameters (``standardize.arrays``, ``method.features``, ``k.max``)
#: need no entry: the message maps ``a.b`` to ``a_b`` (lower case) itself.
KEYWORD_SPELLINGS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        "K": (("k", "sparcl's K is k= (lower case)"),),
        "n_clusters": (
            ("k", "scikit-learn's n_clusters is k= (the sklearn wrappers take n_clusters)"),
        ),
        "wbounds": (("wbound", "{fn} takes one bound, wbound= (a sequence of bounds is a path)"),),
        "wbound": (("wbounds", "{fn} takes a sequence of bounds, wbounds="),),
        "maxiter": (
            ("max_iter", "sparcl's maxiter is max_iter="),
            ("niter", "{fn} caps its iterations with niter= (sparcl's name here)"),
        ),
        "iter.max": (("max_iter", "R's iter.max is max_iter="),),
        "max.iter": (("max_iter", "R's max.iter is max_iter="),),
        "niter": (("max_iter", "{fn} caps its iterations with max_iter="),),
        "max_iter": (("niter", "{fn} caps its iterations with niter= (sparcl's name)"),),
        "nstart": (("n_init", "R's nstart is n_init="),),
        "n_init": (("nstart", "{fn} takes sparcl's nstart= (the number of random starts)"),),
        "silent": (
            ("verbose", "sparcl's silent=TRUE is verbose=False, the default"),
            ("progress", "sparcl's silent=TRUE is progress=False"),
            ("", "{fn} prints nothing (sparcl's silent=TRUE): leave silent= out"),
        ),
        "verbose": (
            ("progress", "{fn} shows progress with progress="),
            ("", "{fn} prints nothing: leave verbose= out"),
        ),
        "random_state": (("rng", "random_state is rng= (None, an int seed or a Generator)"),),
        "seed": (("rng", "a seed is rng= (None, an int seed or a Generator)"),),
        "metric": (("dissimilarity", "pysparcl's metric= is dissimilarity="),),
        "lambda": (("lam", "the penalty lambda is lam="),),
        "lambda_": (("lam", "the penalty lambda is lam="),),
        "hc": (("result_or_linkage", "sparcl's hc is the first argument, result_or_linkage"),),
        "standardize": (("scale", "standardising the columns is scale=True"),),
        "standardise": (("scale", "standardising the columns is scale=True"),),
        "na.rm": (("missing", "missing values follow missing="),),
        "na.action": (("missing", "missing values follow missing="),),
        "formula": (("x", "pass the formula first: {fn}('~ a + C(b)', data=df)"),),
    }
)

#: name -> signature of the public functions (``sparseclust.__all__``), from the loader
#: the package declares (:func:`declare_public`): the message of an unknown keyword names
#: those that take it. Filled on the first such message (the package loads its public
#: names on first use; listing them all imports every method).
_PUBLIC: dict[str, inspect.Signature] = {}
_PUBLIC_LOADERS: list[Callable[[], Iterable[Callable[..., Any]]]] = []


def declare_public(functions: Callable[[], Iterable[Callable[..., Any]]]) -> None:
    """Record how to list the package's public functions (their names and signatures
    are read on the first :func:`unknown_keywords_message`); called once by
    ``sparseclust/__init__.py``."""
    _PUBLIC_LOADERS.append(functions)


def _public() -> dict[str, inspect.Signature]:
    while _PUBLIC_LOADERS:
        for f in _PUBLIC_LOADERS.pop()():
            _PUBLIC.setdefault(f.__name__, inspect.signature(f))
    return _PUBLIC


_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _keywords(sig: inspect.Signature) -> list[str]:
    return [n for n, p in sig.parameters.items() if p.kind in _BY_KEYWORD]


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _spelled(fn: str, sig: inspect.Signature, keyword: str) -> tuple[str, str]:
    """(hint, parameter) for ``keyword`` read as another package's spelling of one of
    ``fn``'s parameters (:data:`KEYWORD_SPELLINGS`, then R's ``a.b`` as ``a_b``);
    ``("", "")`` when it is none."""
    params = _keywords(sig)
    first = next(iter(sig.parameters.values()), None)
    if keyword in sig.parameters and keyword not in params:  # positional-only
        data = " (or data=df)" if "data" in params else ""
        return f"{fn} takes the data first, by position: {fn}(df, ...){data}", ""
    fill = {"fn": fn, "kw": keyword}
    for param, hint in KEYWORD_SPELLINGS.get(keyword, ()):
        if param == "x" and first is not None and first.kind is first.POSITIONAL_ONLY:
            return hint.format(**fill, param=param), ""
        if param == "" or param in params:
            return hint.format(**fill, param=param), param
    own = keyword.lower().replace(".", "_")
    if own != keyword and own in params:
        return f"{keyword} is {own}= here", own
    return "", ""


def _taken_by(fn: str, keyword: str) -> str:
    """Which other public functions take ``keyword`` (the closest relatives of ``fn``
    first, at most three), as a clause; ``""`` when none does."""
    words = set(fn.split("_"))
    others = sorted(
        (name for name, other in _public().items() if name != fn and keyword in _keywords(other)),
        key=lambda name: (-len(words & set(name.split("_"))), name),
    )[:3]
    return f"{_join(others)} take{'s' if len(others) == 1 else ''} {keyword}=" if others else ""


def unknown_keywords_message(fn: str, sig: inspect.Signature, keywords: Sequence[str]) -> str:
    """The ``TypeError`` message of a call of ``fn`` with keywords it does not take:
    for each, what it means here (sparcl's and R's spellings mapped,
    :data:`KEYWORD_SPELLINGS`), the public functions that take it, and ``fn``'s
    nearest parameter names (all of them when none is near).

    Examples
    --------
    >>> def f(x=None, /, k=None, *, wbound=None, max_iter=6): ...
    >>> print(unknown_keywords_message("f", inspect.signature(f), ["K", "maxiter", "zzz"]))
    f() got an unexpected keyword argument 'K': sparcl's K is k= (lower case). Nearest parameters: k.
    f() got an unexpected keyword argument 'maxiter': sparcl's maxiter is max_iter=. Nearest parameters: max_iter.
    f() got an unexpected keyword argument 'zzz'. f's parameters: k, wbound, max_iter.
    """
    params = _keywords(sig)
    lines = []
    for keyword in keywords:
        hint, param = _spelled(fn, sig, keyword)
        others = "" if keyword in sig.parameters else _taken_by(fn, keyword)
        hints = [h for h in (hint, others) if h]
        own = keyword.lower().replace(".", "_")
        near = [param] if param else []
        near += difflib.get_close_matches(own, params, n=3, cutoff=0.6) or (
            difflib.get_close_matches(own, params, n=3, cutoff=0.4)
        )
        near = list(dict.fromkeys(near))[:3]
        tail = (
            f"Nearest parameters: {', '.join(near)}."
            if near
            else f"{fn}'s parameters: {', '.join(params)}."
        )
        head = f"{fn}() got an unexpected keyword argument {keyword!r}"
        lines.append(f"{head}: {'; '.join(hints)}. {tail}" if hints else f"{head}. {tail}")
    return "\n".join(lines)


def rules(**declared: Rule) -> Callable[[F], F]:
    """Declare a public function's parameter rules, checked in one place.

    The decorated function receives every declared parameter already checked and
    normalised (``k=3.0`` arrives as ``3``; a column list as a list of strings); its
    signature, name and docstring are the function's own. The rules stay readable on
    the function as ``__rules__`` (the generated test in ``tests/_data/test_params.py``
    feeds each one its bad values). A keyword the function does not take raises a
    ``TypeError`` naming the function, the keyword, what it means here (sparcl's and
    R's spellings, :data:`KEYWORD_SPELLINGS`) and the nearest parameter names
    (:func:`unknown_keywords_message`).

    Examples
    --------
    >>> @rules(k=Int(min=2), init=Choice(("mean", "random")))
    ... def fit(x, k, *, init="mean"):
    ...     return k, init
    >>> fit(None, 3.0)
    (3, 'mean')
    >>> fit(None, 1)
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer >= 2; got k=1.
    >>> fit(None, K=3)
    Traceback (most recent call last):
    ...
    TypeError: fit() got an unexpected keyword argument 'K': sparcl's K is k= (lower case). Nearest parameters: k.
    """

    def decorate(func: F) -> F:
        sig = inspect.signature(func)
        unknown = set(declared) - set(sig.parameters)
        if unknown:
            raise TypeError(f"rules for parameters {sorted(unknown)} not in {func.__name__}()")

        takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        by_keyword = frozenset(_keywords(sig))

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            unknown = [] if takes_any else [kw for kw in kwargs if kw not in by_keyword]
            if unknown:  # Python's bare error would not say what the keyword is here
                raise TypeError(unknown_keywords_message(func.__name__, sig, unknown))
            bound = sig.bind(*args, **kwargs)
            given = dict(bound.arguments)  # every argument the caller wrote, as written
            for name, rule in declared.items():
                if name in bound.arguments:
                    bound.arguments[name] = rule.check(name, bound.arguments[name])
                else:
                    default = sig.parameters[name].default
                    if default is not inspect.Parameter.empty:
                        rule.check(name, default)  # a default breaking its own rule is a bug
            token = _GIVEN.set((checked, given))
            try:
                with watch_sigint() as seen:
                    out = func(*bound.args, **bound.kwargs)
            except SystemError as e:
                if _interrupted(e):
                    raise KeyboardInterrupt from e
                raise
            finally:
                _GIVEN.reset(token)
            if seen.is_set():  # Ctrl-C came, and its exception was lost on the way
                raise KeyboardInterrupt
            return out

        checked.__rules__ = dict(declared)  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate
