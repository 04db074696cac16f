"""Vendor toolchains edgepipe's placement is verified against (all optional), one adapter per tool.

Each adapter (:mod:`~edgepipe.vendors.vela`, :mod:`~edgepipe.vendors.qnn`, :mod:`~edgepipe.vendors.rknn`) runs
its compiler and returns the placement it chose; :func:`compare` turns that and edgepipe's verdicts into a
:class:`~edgepipe.support.report.Verification`; :func:`verify_report` runs the tool a target profile names.
"""

from edgepipe.vendors.compare import compare
from edgepipe.vendors.verification import vendor_verification, verify_report

__all__ = ["compare", "vendor_verification", "verify_report"]
