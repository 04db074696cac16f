"""Stage 2, export: the source model as float ONNX and float TFLite, batch fixed to 1."""
