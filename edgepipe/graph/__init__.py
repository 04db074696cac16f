"""The common graph every check reads: ONNX and TFLite models as one list of operators with typed tensors,
with the values a vendor compiler knows before the model runs folded in."""
