"""Held-out real models, grouped by domain: each module defines its models (the pinned wheel, the member, what it
covers, how its data are made) and lists them in ``MODELS``; tests/realmodels/heldout.py gathers them."""
