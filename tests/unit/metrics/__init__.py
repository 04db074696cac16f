"""Tests of edgepipe.metrics."""
