"""Vendor toolchains edgepipe's placement is verified against (all optional, imported lazily).

Each adapter returns the vendor's placement by node name; :func:`compare` turns
it and edgepipe's verdicts into a :class:`~edgepipe.support.report.Verification`.
"""

from edgepipe.verify.compare import compare, verify_report

__all__ = ["compare", "verify_report"]
