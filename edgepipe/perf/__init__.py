"""Performance estimation: per-op costs from a graph, the emulated delegate, power modes, Vela, calibration.

``predict(path, profile)`` is the entry point: read the graph's ops
(:mod:`edgepipe.perf.graph`), place each on the accelerator or the fallback CPU,
cost them with the profile's :class:`~edgepipe.targets.performance.PerformanceSpec`
(:mod:`edgepipe.perf.cost_model`) and express the result per power mode
(:mod:`edgepipe.perf.power`).
"""
