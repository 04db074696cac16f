"""The int8 forms host-cpu may deploy (QDQ, uint8 activations, QOperator, LiteRT int8), their fidelity on the
host's own kernels, and which of them is fastest on this machine."""
