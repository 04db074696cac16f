"""Host latency done right: warm-up, a sample count or time budget, order statistics with a confidence
interval, every artifact of a build timed in one interleaved session, concurrent load."""
