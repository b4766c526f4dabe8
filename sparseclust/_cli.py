"""Command line: ``python -m sparseclust <method> (--data FILE.csv | --dataset NAME) ...``.

Each method registers a :class:`Command` (its options and how to call it); the
shared options (input, label column, outputs, seed) are added once here.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMMANDS", "DEFAULT_SEED", "Command", "main"]

#: The command line's seed when ``--seed`` is not given: a command prints the same
#: result every time it is run (the Python functions' ``rng=None`` draws fresh).
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Command:
    """One sub-command: ``add_arguments(parser)`` and ``run(args, x, data) -> result``.

    ``x`` is a DataFrame (``data`` None) or a formula string with its ``data``.
    """

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Any, Any], Any]
    plot: Callable[[Any], Any] = lambda result: result.plot().figure
    #: arguments the ``Call:`` line always shows (the method's main choices), even at
    #: their defaults: the printed call says what was run
    show: tuple[str, ...] = ()


def _lam(text: str) -> float | str:
    if text == "farthest_first":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lam takes a positive number or 'farthest_first'; got {text!r}"
        ) from None


@dataclass(frozen=True)
class _Call:
    """A :class:`Command`'s ``run``: ``sparseclust.<func>(x, data=data, **kwargs)``.

    ``kwargs`` holds every option named in ``options`` under its own name
    (``max_iter=args.max_iter``), the shared ``--categorical`` and ``--numeric``,
    ``--seed`` as ``rng`` when ``seeded``, and each ``computed`` parameter's value
    derived from the parsed options.
    """

    func: str
    options: tuple[str, ...]
    computed: dict[str, Callable[[argparse.Namespace], Any]] = field(default_factory=dict)
    seeded: bool = True

    def __call__(self, args: argparse.Namespace, x: Any, data: Any) -> Any:
        import sparseclust

        kwargs = {name: getattr(args, name) for name in self.options}
        kwargs |= {name: value(args) for name, value in self.computed.items()}
        kwargs |= {"categorical": args.categorical, "numeric": args.numeric}
        if self.seeded:
            kwargs["rng"] = args.seed
        func = getattr(sparseclust, self.func)
        # pass only what differs from the function's defaults: the Call: line shows the
        # arguments a caller wrote, and the command line's user wrote these options
        defaults = {n: p.default for n, p in inspect.signature(func).parameters.items()}
        kwargs = {
            n: v
            for n, v in kwargs.items()
            if (n in _ON_OFF and v is not None)  # --scale / --no-scale: as written
            or not (_is_default(v, defaults.get(n)) or (v is None and defaults.get(n) is not None))
        }
        if data is not None:
            kwargs["data"] = data
        return func(x, **kwargs)


def _is_default(value: Any, default: Any) -> bool:
    """``value`` is the function's default (same type and value)."""
    return type(value) is type(default) and value == default


#: Options given as ``--x`` / ``--no-x`` (default None: not written, the method's default).
_ON_OFF = ("scale",)


def _scale_option(g: Any, help: str) -> None:
    """``--scale`` / ``--no-scale``; neither leaves the method's default (and its
    warning about columns of very different spread)."""
    g.add_argument("--scale", action=argparse.BooleanOptionalAction, default=None, help=help)


def _choice(g: Any, flag: str, choices: Sequence[str], help: str | None = None) -> None:
    """An option taking one of ``choices``, the first being the default."""
    g.add_argument(flag, choices=list(choices), default=choices[0], help=help)


def _penalty_args(g: Any, k_help: str) -> None:
    """--k, --lam and --max-iter: the same for every DP-style method."""
    g.add_argument("--k", type=int, default=None, help=k_help)
    g.add_argument(
        "--lam",
        type=_lam,
        default=None,
        help="penalty for a new cluster (number) or 'farthest_first' (needs --k)",
    )
    g.add_argument("--max-iter", type=int, default=100, help="cap on passes (default 100)")


def _dpmeans_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("DP-means")
    _penalty_args(g, "number of clusters: calibrates lambda (alone) or feeds farthest_first")
    _choice(
        g,
        "--init",
        ["mean", "random"],
        "start from the global mean (default) or a random point (DP-means(R))",
    )
    _scale_option(g, "standardise numeric variables first (default: raw, as Kulis & Jordan)")
    _choice(g, "--missing", ["raise", "drop"], "rows with missing values: error (default) or drop")


_dpmeans_run = _Call("dpmeans", ("lam", "k", "init", "scale", "max_iter", "missing"))


def _craft_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("CRAFT")
    g.add_argument(
        "--m",
        type=float,
        default=0.5,
        help="fraction of features selected per cluster (default 0.5)",
    )
    _penalty_args(
        g,
        "number of clusters (lambda calibrated); omit it and --lam to choose K "
        "automatically (--k-method)",
    )
    _choice(
        g,
        "--k-method",
        ["stability", "gap"],
        "automatic K: subsample stability after a gap test of K = 1 (default), "
        "or the gap statistic",
    )
    g.add_argument("--k-max", type=int, default=8, help="largest automatic K (default 8)")
    g.add_argument(
        "--n-jobs", type=int, default=None, help="parallel restarts and subsample fits (-1: all)"
    )
    g.add_argument(
        "--rho",
        type=float,
        default=None,
        help="prior variance in (0, m(1-m)): near m(1-m) local, near 0 global selection",
    )
    _choice(g, "--budget", ["fixed", "approximate"])
    g.add_argument("--eps-c", type=float, default=None, help="approximate budget: categorical")
    g.add_argument("--eps-v", type=float, default=None, help="approximate budget: numeric")
    _scale_option(g, "standardise numeric columns (default: yes, as the CRAFT paper)")
    g.add_argument("--n-init", type=int, default=None, help="restarts (default: by data size)")
    _choice(
        g,
        "--missing",
        ["native", "drop", "raise"],
        "missing cells: handled natively (default), rows dropped, or an error",
    )


_craft_run = _Call(
    "craft",
    (
        "m",
        "k",
        "lam",
        "rho",
        "budget",
        "eps_c",
        "eps_v",
        "max_iter",
        "k_method",
        "k_max",
        "n_jobs",
        "missing",
        "scale",
    ),
    computed={
        "n_init": lambda args: "auto" if args.n_init is None else args.n_init,
    },
)


def _sparse_common(g: Any) -> None:
    _choice(
        g,
        "--weights",
        ["exact", "sparcl"],
        "exact weight projection (default) or sparcl's BinarySearch replica",
    )
    _scale_option(g, "standardise each feature first (default: raw, as sparcl)")


#: The options of :func:`_kmeans_common`, passed on under their own names.
_KMEANS_OPTIONS = ("k", "weights", "algorithm", "nstart", "max_iter", "scale")


def _kmeans_common(g: Any) -> None:
    g.add_argument("--k", type=int, required=True, help="number of clusters")
    _choice(g, "--algorithm", ["hartigan-wong", "lloyd"])
    g.add_argument("--nstart", type=int, default=20, help="random starts (default 20)")
    g.add_argument("--max-iter", type=int, default=6, help="rounds (default 6, as sparcl)")
    _sparse_common(g)


def _sparse_kmeans_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sparse k-means")
    g.add_argument(
        "--wbound",
        type=float,
        default=None,
        help="L1 bound on the weights (1 < s <= sqrt(p); default 0.5 sqrt(p), as sparcl)",
    )
    _kmeans_common(g)


_sparse_kmeans_run = _Call("sparse_kmeans", ("wbound", *_KMEANS_OPTIONS))


def _kmeans_permute_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("permutation tuning of sparse k-means")
    g.add_argument(
        "--wbounds", type=float, nargs="+", default=None, help="bounds to try (default: grid)"
    )
    g.add_argument("--nperms", type=int, default=25, help="permutations (default 25)")
    g.add_argument("--nvals", type=int, default=10, help="length of the default grid")
    _choice(g, "--rule", ["max", "1se"])
    g.add_argument("--n-jobs", type=int, default=None, help="parallel permutations (-1: all)")
    _kmeans_common(g)


_kmeans_permute_run = _Call(
    "kmeans_sparse_permute", ("wbounds", "nperms", "nvals", "rule", "n_jobs", *_KMEANS_OPTIONS)
)


def _sparse_hclust_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sparse hierarchical clustering")
    g.add_argument(
        "--wbound", type=float, default=None, help="L1 bound (default 0.5 sqrt(p), as sparcl)"
    )
    _choice(g, "--method", ["average", "complete", "single", "centroid"])
    _choice(g, "--dissimilarity", ["squared", "absolute"])
    g.add_argument("--k", type=int, default=None, help="cut the tree into k clusters (labels)")
    g.add_argument(
        "--niter",
        type=int,
        default=50,
        help="iterations (default 50; sparcl's 15 often stops short)",
    )
    g.add_argument(
        "--standardize-arrays", action="store_true", help="standardise each row (sparcl)"
    )
    _sparse_common(g)


_sparse_hclust_run = _Call(
    "sparse_hclust",
    ("wbound", "method", "dissimilarity", "k", "niter", "standardize_arrays", "weights", "scale"),
    seeded=False,
)


COMMANDS: dict[str, Command] = {
    "craft": Command(
        "CRAFT: clustering with cluster-specific feature selection, numeric and categorical "
        "data (Garg, Rudin & Jaakkola 2016)",
        _craft_args,
        _craft_run,
        lambda r: r.plot_subspaces(),
        show=("m", "budget"),
    ),
    "dpmeans": Command("DP-means clustering (Kulis & Jordan 2012)", _dpmeans_args, _dpmeans_run),
    "sparse-kmeans": Command(
        "sparse k-means for one L1 bound (Witten & Tibshirani 2010; sparcl's KMeansSparseCluster)",
        _sparse_kmeans_args,
        _sparse_kmeans_run,
        lambda r: r.plot_weights().figure,
    ),
    "kmeans-permute": Command(
        "choose the L1 bound of sparse k-means by the permutation gap statistic "
        "(sparcl's KMeansSparseCluster.permute)",
        _kmeans_permute_args,
        _kmeans_permute_run,
    ),
    "sparse-hclust": Command(
        "sparse hierarchical clustering (Witten & Tibshirani 2010; sparcl's "
        "HierarchicalSparseCluster)",
        _sparse_hclust_args,
        _sparse_hclust_run,
        lambda r: r.plot(),
    ),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sparseclust",
        description="Clustering with feature selection on a CSV file or a shipped dataset.",
        epilog="Example: python -m sparseclust craft --dataset wine --m 0.5 --k 3",
    )
    sub = parser.add_subparsers(dest="command", metavar="method", required=True)
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        src = p.add_mutually_exclusive_group(required=True)
        src.add_argument("--data", metavar="FILE.csv", help="CSV file with a header row")
        src.add_argument(
            "--dataset",
            metavar="NAME",
            help="a shipped dataset (see sparseclust.datasets.list_datasets())",
        )
        p.add_argument(
            "--label",
            metavar="COLUMN",
            help="column holding known classes: excluded from clustering and "
            "compared with the clusters (default for --dataset: its label)",
        )
        p.add_argument(
            "--drop", metavar="COLUMN", nargs="+", default=[], help="columns to leave out"
        )
        p.add_argument(
            "--formula",
            metavar="FORMULA",
            help="one-sided formula, e.g. '~ . - id' (overrides --drop)",
        )
        p.add_argument(
            "--categorical",
            metavar="COLUMN",
            nargs="+",
            default=None,
            help="treat these columns as categorical",
        )
        p.add_argument(
            "--numeric",
            metavar="COLUMN",
            nargs="+",
            default=None,
            help="treat these columns as numeric",
        )
        p.add_argument(
            "--seed",
            type=int,
            default=DEFAULT_SEED,
            help=f"random seed (default {DEFAULT_SEED}: the same result on every run)",
        )
        p.add_argument("--labels-out", metavar="FILE.csv", help="write the cluster labels here")
        p.add_argument("--plot-out", metavar="FILE.png", help="write the result's main plot here")
        cmd.add_arguments(p)
    return parser


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    import pandas as pd

    from . import datasets

    if args.dataset is not None:
        names = list(datasets.list_datasets()["name"])
        if args.dataset not in names:
            raise ValueError(f"unknown dataset {args.dataset!r}; available: {', '.join(names)}")
        df = datasets.load_dataset(args.dataset)
        label = args.label or datasets.list_datasets().set_index("name").loc[args.dataset, "label"]
    else:
        try:
            df = pd.read_csv(args.data)
        except FileNotFoundError:
            raise ValueError(f"--data: no such file {args.data!r}") from None
        except OSError as err:  # a directory, no permission, ...
            raise ValueError(f"--data: cannot open {args.data!r}: {err}") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"--data: cannot read {args.data!r} as CSV: {err}") from None
        label = args.label
    if label is not None and label not in df.columns:
        raise ValueError(f"--label: no column {label!r}; columns are {list(df.columns)}")
    y = df[label] if label is not None else None
    if args.formula:
        if label is not None:
            # --label is excluded from clustering: a formula must not use it (as '~ .' would).
            from ._data.formula import evaluate_formula

            if label in evaluate_formula(args.formula, df).variables.columns:
                name = label if label.isidentifier() else f'Q("{label}")'
                raise ValueError(
                    f"--formula {args.formula!r} clusters on the label column {label!r}, which "
                    f"--label excludes from clustering; remove it, e.g. --formula '~ . - {name}'."
                )
        return (args.formula, df), y
    unknown = [c for c in args.drop if c not in df.columns]
    if unknown:
        raise ValueError(f"--drop: no columns {unknown}; columns are {list(df.columns)}")
    x = df.drop(columns=[*args.drop, *([label] if label is not None else [])])
    return (x, None), y


def _data_name(args: argparse.Namespace) -> str:
    """How the ``Call:`` line names the data: the shipped data set or the CSV file."""
    if args.dataset is not None:
        return args.dataset
    return f"read_csv({args.data!r})"


def _as_options(text: str, sub: argparse.ArgumentParser) -> str:
    """A message written for Python (``niter=50``) as its command-line options
    (``--niter 50``), for the options this sub-command has."""
    actions = [a for a in sub._actions if a.option_strings]  # noqa: SLF001
    dests = {a.dest: a.option_strings[-1] for a in actions if a.option_strings[-1].startswith("--")}
    on_off = {a.dest for a in actions if isinstance(a, argparse.BooleanOptionalAction)}
    dests["rng"] = "--seed"

    def swap(match: re.Match) -> str:
        name, value = match.group(1), match.group(2)
        if name in on_off and value in ("True", "False"):  # --scale / --no-scale
            return f"--{'' if value == 'True' else 'no-'}{name.replace('_', '-')}"
        return f"{dests[name]} {value}" if name in dests else match.group(0)

    return re.sub(r"\b([a-z][a-z0-9_]*)=([^\s,;:)]+)", swap, text)


def _report_warnings(caught: list, sub: argparse.ArgumentParser) -> None:
    """Warnings of the fit, each once, as ``prog: warning: ...`` lines on stderr, in
    the command line's terms (not attributed to a file of the package)."""
    seen = set()
    for w in caught:
        text = _as_options(str(w.message), sub)
        if text in seen:
            continue
        seen.add(text)
        print(f"{sub.prog}: warning ({w.category.__name__}): {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 usage or data error)."""
    from ._results.format import call_context

    parser = _parser()
    args = parser.parse_args(argv)
    sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
    cmd = COMMANDS[args.command]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x, data), y = _load(args)
            with call_context(data_name=_data_name(args), show=cmd.show):
                result = cmd.run(args, x, data)
    except (ValueError, TypeError) as err:
        sub.print_usage(sys.stderr)
        print(f"{sub.prog}: error: {err}", file=sys.stderr)
        return 2
    _report_warnings(caught, sub)
    print(result)
    print(f"Seed: {args.seed} (--seed N for another random start)")
    print()
    print(result.summary())
    if y is not None:
        from .metrics import cluster_report

        rep = cluster_report(y, result.labels, dropna=True)
        print()
        print(f"Agreement of the clusters with {y.name!r}:")
        print(rep.to_string(float_format=lambda v: f"{v:.4f}"))
    if args.labels_out:
        result.labels.rename("cluster").to_frame().to_csv(args.labels_out)
        print(f"\nLabels written to {args.labels_out}")
    if args.plot_out:
        import matplotlib

        matplotlib.use("Agg")
        cmd.plot(result).savefig(args.plot_out, dpi=120)
        print(f"Plot written to {args.plot_out}")
    return 0
