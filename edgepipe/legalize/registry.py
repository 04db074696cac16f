"""Every legalization rewrite, in the order they are tried (a rewrite may emit ops a later one rewrites: Gelu's
Erf). Adding one is a module with a ``REWRITE`` and one line here, and its name in ``RewriteName``
(:mod:`edgepipe.config`)."""

from __future__ import annotations

from edgepipe.legalize import (
    div_constant,
    erf,
    focus,
    gelu,
    hard_sigmoid,
    hard_swish,
    layer_norm,
    pool_cascade,
    reshape_rank,
    softmax_axis,
)
from edgepipe.legalize.rewrite import Rewrite

REWRITES: tuple[Rewrite, ...] = (
    hard_sigmoid.REWRITE,
    hard_swish.REWRITE,
    pool_cascade.REWRITE,
    focus.REWRITE,
    gelu.REWRITE,
    erf.REWRITE,
    layer_norm.REWRITE,
    softmax_axis.REWRITE,
    reshape_rank.REWRITE,
    div_constant.REWRITE,
)
