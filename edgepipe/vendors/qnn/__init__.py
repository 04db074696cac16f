"""Qualcomm's HTP emulator (``onnxruntime-qnn``): which nodes of a QDQ ONNX model the HTP runs."""
