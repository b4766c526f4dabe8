"""``Summary``: named tables plus notes, printable as text, HTML and LaTeX."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["FOLD_ABOVE", "RARE_SHARE", "Summary"]

#: Profile rows of a categorical level whose share of all rows is below this are
#: folded in the HTML summary.
RARE_SHARE = 0.01
#: Profile tables up to this many rows are shown whole in the HTML summary.
FOLD_ABOVE = 30


@dataclass(frozen=True, eq=False)
class Summary:
    """What ``result.summary()`` returns.

    Attributes
    ----------
    title : str
    call : str
    tables : dict of str -> DataFrame
        Machine-readable tables, e.g. ``s.tables["clusters"]``.
    notes : list of str
        Dropped rows, convergence, scaling and other remarks.
    html_hidden : tuple of str
        Tables the HTML view leaves out because another table shows the same numbers
        (they stay in ``tables`` and in the text).
    text_hidden : tuple of str
        Tables the printed text leaves out because, for this fit, another table shows
        the same rows (e.g. CRAFT's selected profiles when every cluster selected every
        feature; a note says so). They stay in ``tables``.
    unselected : tuple of str
        Variables no cluster selected: the HTML view folds their profile rows.

    Examples
    --------
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> summary = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3).summary()
    >>> type(summary).__name__, "clusters" in summary.tables
    ('Summary', True)
    """

    title: str
    call: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    float_format: str = "{:.4g}"
    html_hidden: tuple[str, ...] = ()
    text_hidden: tuple[str, ...] = ()
    unselected: tuple[str, ...] = ()

    def _fmt(self, df: pd.DataFrame) -> pd.DataFrame:
        def f(v: object) -> object:
            if isinstance(v, float):
                return "NA" if pd.isna(v) else self.float_format.format(v)
            return v

        return df.apply(lambda col: col.map(f)) if len(df) else df

    def __str__(self) -> str:
        lines = [self.title, "=" * len(self.title)]
        if self.call:
            lines.append(f"Call: {self.call}")
        for name, df in self.tables.items():
            if name in self.text_hidden:
                continue
            lines += ["", f"{name.replace('_', ' ').capitalize()}:", self._fmt(df).to_string()]
        if self.notes:
            lines += ["", "Notes:"] + [f"[{i}] {n}" for i, n in enumerate(self.notes, 1)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        """Compact HTML: tables repeated by others left out (``html_hidden``), and in
        profile tables the rows of unselected variables and of rare levels (overall
        share below :data:`RARE_SHARE`) folded into a closed ``<details>``."""
        parts = [f"<h4>{html.escape(self.title)}</h4>"]
        if self.call:
            parts.append(f"<p><code>{html.escape(self.call)}</code></p>")
        for name, df in self.tables.items():
            if name in self.html_hidden:
                continue
            parts.append(f"<h5>{html.escape(name.replace('_', ' ').capitalize())}</h5>")
            shown, folded, why = self._fold(df)
            parts.append(self._fmt(shown).to_html())
            if len(folded):
                parts.append(
                    f"<details><summary>{len(folded)} more rows ({why})</summary>"
                    f"{self._fmt(folded).to_html()}</details>"
                )
        hidden = [n for n in self.html_hidden if n in self.tables]
        if hidden:
            parts.append(
                f"<p>Also in <code>.tables</code> (same numbers, other layout): "
                f"{html.escape(', '.join(hidden))}.</p>"
            )
        if self.notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
            parts.append(f"<p>Notes:</p><ol>{items}</ol>")
        return "\n".join(parts)

    def _fold(self, df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, str]:
        """(rows shown, rows folded, why) of a profile table: one indexed by
        (variable, statistic) with an ``overall`` column; other tables are not folded."""
        if not (
            isinstance(df.index, pd.MultiIndex)
            and df.index.nlevels == 2
            and "overall" in df.columns
            and len(df) > FOLD_ABOVE
        ):
            return df, df.iloc[:0], ""
        var = df.index.get_level_values(0)
        stat = df.index.get_level_values(1)
        level = ~stat.isin(["mean", "sd"])
        rare = level & (pd.to_numeric(df["overall"], errors="coerce").fillna(0) < RARE_SHARE)
        unsel = var.isin(list(self.unselected))
        fold = np.asarray(rare | unsel)
        why = []
        if unsel.any():
            why.append(f"variables no cluster selected: {len(set(var[unsel]))}")
        if (rare & ~unsel).any():
            why.append(f"levels under {RARE_SHARE:.0%} of all rows: {int((rare & ~unsel).sum())}")
        return df[~fold], df[fold], "; ".join(why)

    def as_latex(self) -> str:
        """All tables as LaTeX ``tabular`` blocks (notes as a final paragraph).

        Returns
        -------
        str
            One ``tabular`` block per table, each after a ``% name`` comment line.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> tex = fit.summary().as_latex()
        >>> tex.count("begin{tabular}") == len(fit.summary().tables)
        True
        """
        out = []
        for name, df in self.tables.items():
            out.append(f"% {name}\n{_latex_table(self._fmt(df))}")
        if self.notes:
            out.append("\n".join(self.notes))
        return "\n".join(out)


def _latex_escape(v: object) -> str:
    text = str(v)
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
    ):
        text = text.replace(a, b)
    return text


def _latex_table(df: pd.DataFrame) -> str:
    """A plain ``tabular`` (no jinja2 needed, unlike ``DataFrame.to_latex``)."""
    cols = "l" + "r" * df.shape[1]
    head = " & ".join([""] + [_latex_escape(c) for c in df.columns]) + r" \\"
    rows = [
        " & ".join([_latex_escape(i)] + [_latex_escape(v) for v in row]) + r" \\"
        for i, row in zip(df.index, df.itertuples(index=False))
    ]
    return "\n".join(
        [
            rf"\begin{{tabular}}{{{cols}}}",
            r"\hline",
            head,
            r"\hline",
            *rows,
            r"\hline",
            r"\end{tabular}",
        ]
    )
