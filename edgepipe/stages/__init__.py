"""The pipeline stages, one module each; the driver in ``edgepipe.pipeline`` calls them in order."""
