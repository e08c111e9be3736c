"""The builder of P1 / P1$ (`gpuaas.milp.model.build_model`): columns and named row families
accumulated as arrays while the `define_*` (`gpuaas.milp.variables`) and `constrain_*`
(`gpuaas.milp.constraints`) functions run, and the lazy labels that name them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuaas.instance import Instance

INF = math.inf


@dataclass
class Builder:
    """Accumulates columns and named row families (COO triplets) while the model is built."""

    instance: Instance
    lower: list[np.ndarray] = field(default_factory=list)
    upper: list[np.ndarray] = field(default_factory=list)
    cost: list[np.ndarray] = field(default_factory=list)
    integer: list[np.ndarray] = field(default_factory=list)
    col_parts: list[Any] = field(default_factory=list)
    n_cols: int = 0
    row_lo: list[np.ndarray] = field(default_factory=list)
    row_hi: list[np.ndarray] = field(default_factory=list)
    row_parts: list[tuple[str, Any]] = field(default_factory=list)
    coo: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    families: dict[str, slice] = field(default_factory=dict)
    n_rows: int = 0

    def cols(self, names: list[str], cost: Any, integer: bool, upper: float) -> np.ndarray:
        """Add len(names) columns with lower bound 0; return their indices."""
        k = len(names)
        idx = np.arange(self.n_cols, self.n_cols + k, dtype=np.int64)
        self.lower.append(np.zeros(k))
        self.upper.append(np.full(k, upper))
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (k,)).copy())
        self.integer.append(np.full(k, integer))
        self.col_parts.append(names)
        self.n_cols += k
        return idx

    def rows(
        self,
        family: str,
        labels: list[str],
        lower: Any,
        upper: Any,
        r: np.ndarray,
        c: np.ndarray,
        v: np.ndarray,
    ) -> None:
        """Add a family of rows `lower <= A x <= upper`; (r, c, v) are COO entries with r local."""
        k = len(labels)
        self.row_lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (k,)).copy())
        self.row_hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (k,)).copy())
        self.row_parts.append((family, labels))
        r = np.asarray(r, dtype=np.int64)
        self.coo.append(
            (r + self.n_rows, np.asarray(c, dtype=np.int64), np.asarray(v, dtype=np.float64))
        )
        self.families[family] = slice(self.n_rows, self.n_rows + k)
        self.n_rows += k


@dataclass(frozen=True)
class Labels:
    """Labels like `j3_n1_v2` (with a prefix: `x_j3_n1_v2`) of equally long index arrays, made
    into strings only when `label_names` is called."""

    prefix: str | None
    axes: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(next(iter(self.axes.values()))) if self.axes else 0


def labels(**axes: np.ndarray) -> Labels:
    """Row/column labels like `j3_n1_v2` from equally long index arrays (lazy)."""
    return Labels(None, axes)


def label_names(labels: Any) -> list[str]:
    """The strings of a `Labels` (or a list of strings, as it is)."""
    if not isinstance(labels, Labels):
        return list(labels)
    keys = list(labels.axes)
    cols = [np.asarray(labels.axes[k]).tolist() for k in keys]
    out = ["_".join(f"{k}{i}" for k, i in zip(keys, vals)) for vals in zip(*cols)]
    return out if labels.prefix is None else [f"{labels.prefix}_{lab}" for lab in out]


def grid(*shape: int) -> list[np.ndarray]:
    """Flattened index arrays of a full grid of the given shape (C order)."""
    return [a.ravel() for a in np.indices(shape)]


def prefixed_labels(prefix: str, **axes: np.ndarray) -> Labels:
    """Labels with a prefix, e.g. the column names `x_j3_n1_v2` (lazy)."""
    return Labels(prefix, axes)
