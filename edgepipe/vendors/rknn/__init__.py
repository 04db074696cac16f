"""Rockchip's rknn-toolkit2, run in its own pinned environment: which layers its compiler puts on the NPU."""
