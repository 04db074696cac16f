"""Constraints on integer tensors the Arm Ethos-U NPUs take (found with Vela on probe graphs)."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint

#: Bits per element of the integer dtypes (a bool is stored in a byte); other dtypes are not judged here.
INTEGER_BITS = {"bool": 8, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32,
                "int64": 64, "uint64": 64}


@constraint
def input_bits_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every non-constant integer input is at most {param} bits wide (an int64 input is 64; the output's width
    does not count): do such integer arithmetic in int32, e.g. on int32 token ids.

    Vela 5.2.0 accepts int64 feature maps for the Ethos-U85 in its operator checks, then finds no OFM
    microblock for an element-wise op or CAST reading one ("Could not find a valid OFM microblock for Greater
    with 64-bit input.") and the whole compile fails; a CAST to int64, and ops that only move int64 data
    (RESHAPE, CONCATENATION, GATHER's indices), compile (probe graphs in tests/verify/test_vela.py).
    """
    wide = [t for t in node.activations_in if INTEGER_BITS.get(t.dtype, 0) > limit]
    if wide:
        return False, (f"{node.op} reads '{wide[0].name}' ({wide[0].dtype}, {INTEGER_BITS[wide[0].dtype]} bits) "
                       f"> {limit} bits")
    return True, f"integer inputs at most {limit} bits"
