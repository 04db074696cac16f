"""edgepipe's own benchmarks: the scripts behind every figure of docs/results.md (``python -m benchmarks``)."""
