"""Calibration and evaluation data: arrays, image and audio folders, preprocessing, checked against the model."""
