"""Host benchmarks done right: warm-up, a sample count or time budget, order statistics with a confidence
interval, fp32 and int8 side by side in one run, concurrent load, and the int8 form that is fastest here."""
