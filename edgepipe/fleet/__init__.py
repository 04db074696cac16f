"""Fleets: many models × many targets, built in parallel (a process pool or Ray) through the shared build cache.

``edgepipe fleet FLEET.toml`` reads a fleet file (:mod:`.spec`), plans one job per
model and group of targets sharing quantization (:mod:`.plan`), runs the jobs on an
executor (:mod:`.executors`, :mod:`.ray_executor`) and writes the fleet compatibility
report (:mod:`.report`, :mod:`.render_md`, :mod:`.render_html`), diffed against a
baseline on request (:mod:`.baseline`). See docs/guide/fleets.md.
"""
