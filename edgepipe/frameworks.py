"""Lazy, quiet imports of the heavy frameworks.

TensorFlow and Keras take seconds to import and print pages of C++ logs; only
the stages that need them import them, through these functions, so
``edgepipe --help`` and ``edgepipe targets list`` stay instant.
"""

from __future__ import annotations

import logging
import os
from types import ModuleType


def _quiet_tf_env() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # oneDNN reorders float sums: not bit-reproducible
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def import_tensorflow() -> ModuleType:
    """``tensorflow``, imported with its logs turned down."""
    _quiet_tf_env()
    from edgepipe.native_logs import native_stderr_to_log

    with native_stderr_to_log():
        import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    logging.getLogger("absl").setLevel(logging.ERROR)
    return tf


def import_keras() -> ModuleType:
    """``keras`` (3.x) on the TensorFlow backend."""
    import_tensorflow()
    import keras

    return keras
