"""Held-out scientific imaging model: cosmic-ray detection in Hubble exposures
(tests/realmodels/models/imaging_astronomy.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.imaging_astronomy import CR_SIDE, FIELD_KINDS, deepcr_engine, deepcr_feed, hst_field


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_cr_feed_is_what_the_packages_clean_feeds() -> None:
    """``clean`` feeds the exposure itself (ACS-WFC's scale is 1, 256 px needs no padding) as (1, 1, H, W); a side
    that is not a multiple of 4 is zero-padded at the top and left."""
    engine = deepcr_engine()
    exposure, _ = hst_field("extragalactic", 3)
    feed = deepcr_feed(engine, exposure)
    assert feed.shape == (1, 1, CR_SIDE, CR_SIDE) and feed.dtype == np.float32
    np.testing.assert_array_equal(feed[0, 0], exposure)
    odd = deepcr_feed(engine, exposure[:254, :255])
    assert odd.shape == (1, 1, 256, 256) and not odd[0, 0, :2].any() and not odd[0, 0, :, :1].any()
    np.testing.assert_array_equal(odd[0, 0, 2:, 1:], exposure[:254, :255])


def test_deepcr_export_is_the_packages_network() -> None:
    """The ONNX export gives the probabilities the package's own ``maskNet`` (PyTorch) gives."""
    import torch

    engine = deepcr_engine()
    feed = deepcr_feed(engine, hst_field("globular_cluster", 4)[0])
    with torch.no_grad():
        want = engine.maskNet(torch.from_numpy(feed)).numpy()
    got = _session("deepcr_acs_wfc").run(["cr_probability"], {"image": feed})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_deepcr_finds_the_cosmic_rays_and_leaves_the_stars_and_galaxies() -> None:
    """On two exposures of each kind of field, at the package's 0.5 threshold, at least 85 % of the pixels hit by
    100 e- or more of cosmic-ray charge are masked (95 % over all six), and fewer than 0.2 % of the pixels more than
    one pixel from any hit are: not the stars' cores, the cluster's crowding or the galaxies' light. Sharp hits
    score near 1, the sky near 0."""
    from scipy.ndimage import binary_dilation

    session, engine = _session("deepcr_acs_wfc"), deepcr_engine()
    found = total = 0
    for kind in FIELD_KINDS:
        for seed in (50, 51):
            exposure, truth = hst_field(kind, seed)
            probability = session.run(["cr_probability"], {"image": deepcr_feed(engine, exposure)})[0][0, 0]
            masked = probability > 0.5
            far = ~binary_dilation(truth, iterations=1)
            recall = (masked & truth).sum() / truth.sum()
            assert recall > 0.85 and (masked & far).sum() / far.sum() < 0.002, (kind, seed, recall)
            assert np.median(probability[truth]) > 0.9 and np.median(probability[far]) < 0.01, kind
            found, total = found + int((masked & truth).sum()), total + int(truth.sum())
    assert found / total > 0.95, found / total


@pytest.mark.parametrize("name", ["deepcr_acs_wfc"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    # electrons: sky of tens to a hundred, stars and cosmic rays of thousands
    image = first["image"]
    assert 10 < np.median(image) < 200 and image.max() > 2000 and image.min() > -50
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
