"""Per-target legalization: ops a target runs on its CPU rewritten into equivalent forms its accelerator runs.

Rewrites act on the float ONNX artifact before quantization, so the int8 artifact quantized from it carries them;
the model file itself is never changed. One module per rewrite, registered in :mod:`edgepipe.legalize.registry`;
:mod:`edgepipe.legalize.driver` keeps a rewrite only when the outputs stay equal and the support check improves.
"""

from edgepipe.legalize.driver import CheckSamples, Legalized, legalizable, legalize_model
from edgepipe.legalize.registry import REWRITES
from edgepipe.legalize.report import LegalizationReport, PlacementSummary, RewriteOutcome

__all__ = ["REWRITES", "CheckSamples", "LegalizationReport", "Legalized", "PlacementSummary", "RewriteOutcome",
           "legalizable", "legalize_model"]
