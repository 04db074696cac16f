"""Vendor toolchains edgepipe's placement is verified against (all optional).

:mod:`edgepipe.toolchains` runs each vendor compiler and returns its placement; :func:`compare` turns it and
edgepipe's verdicts into a :class:`~edgepipe.support.report.Verification`; :func:`verify_report` runs the tool
a target profile names.
"""

from edgepipe.verify.compare import compare
from edgepipe.verify.vendor import vendor_verification, verify_report

__all__ = ["compare", "vendor_verification", "verify_report"]
