"""Operator support: which nodes of a model a target's accelerator runs, and which fall back to the CPU.

``check_model(path, profile)`` reads an ONNX or TFLite graph into a common op
list, runs the profile's constraint predicates on each node, partitions the
graph by the target's semantics and estimates peak memory.
"""

from edgepipe.support.check import check_graph, check_model, read_graph
from edgepipe.support.report import SupportReport

__all__ = ["SupportReport", "check_graph", "check_model", "read_graph"]
