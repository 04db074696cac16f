"""The content-addressed build cache: keys, the cache folder, storage and restore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cache import BuildCache, CacheKey, cache_folder, digest_of, key_parts, target_keys
from edgepipe.config import BuildConfig, CacheConfig, load_config
from edgepipe.targets import load_profile


def _config(tmp_path: Path, **update: object) -> BuildConfig:
    model = tmp_path / "m.onnx"
    if not model.exists():
        model.write_bytes(b"model-v1")
        (tmp_path / "calib.npz").write_bytes(b"calib-v1")
        (tmp_path / "eval.npz").write_bytes(b"eval-v1")
    config = BuildConfig(model=model, data={"calibration": tmp_path / "calib.npz", "evaluation": tmp_path / "eval.npz"})
    return config.model_copy(update=update)


def _digest(config: BuildConfig, target: str = "host-cpu") -> str:
    parts = key_parts(config, load_profile(target))
    assert parts is not None
    return digest_of(parts)


def test_key_is_stable_and_ignores_where_outputs_go(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert _digest(config) == _digest(config)
    assert _digest(config) == _digest(config.model_copy(update={"output": tmp_path / "elsewhere"}))
    gate = config.gate.model_copy(update={"size_pct": 50.0})
    assert _digest(config) == _digest(config.model_copy(update={"gate": gate, "cache": CacheConfig(enabled=False)}))


@pytest.mark.parametrize("changed", ["model", "calibration", "evaluation"])
def test_key_changes_with_model_and_data_content(tmp_path: Path, changed: str) -> None:
    config = _config(tmp_path)
    before = _digest(config)
    name = {"model": "m.onnx", "calibration": "calib.npz", "evaluation": "eval.npz"}[changed]
    (tmp_path / name).write_bytes(b"changed")
    assert _digest(config) != before


def test_key_changes_with_config_and_target_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path)
    before = _digest(config)
    accuracy = config.accuracy.model_copy(update={"max_drop_points": 2.0})
    assert _digest(config.model_copy(update={"accuracy": accuracy})) != before
    latency = config.latency.model_copy(update={"runs": 7})
    assert _digest(config.model_copy(update={"latency": latency})) != before
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "other.toml").write_text('inherit = "host-cpu"\ndescription = "another device"\n', encoding="utf-8")
    monkeypatch.setenv("EDGEPIPE_TARGETS_PATH", str(profiles))
    assert _digest(config, "other") != before


def test_key_parts_name_versions_and_source_digest(tmp_path: Path) -> None:
    parts = key_parts(_config(tmp_path), load_profile("host-cpu"))
    assert parts is not None
    assert {"edgepipe", "tensorflow", "onnxruntime", "edgepipe-source"} <= set(parts["versions"])
    assert len(parts["versions"]["edgepipe-source"]) == 64
    assert parts["model"]["sha256"] and parts["data"]["calibration"] and parts["target"]["name"] == "host-cpu"


def test_unreadable_input_has_no_key(tmp_path: Path) -> None:
    config = _config(tmp_path).model_copy(update={"model": tmp_path / "missing.onnx"})
    assert key_parts(config, load_profile("host-cpu")) is None
    assert target_keys(config, (load_profile("host-cpu"),)) == {}


def test_cache_folder_env_then_config_then_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDGEPIPE_CACHE_DIR", raising=False)
    assert cache_folder(BuildConfig()) == Path("build") / ".edgepipe-cache"
    assert cache_folder(BuildConfig(output=Path("out"))) == Path("out") / ".edgepipe-cache"
    (tmp_path / "edgepipe.toml").write_text('[cache]\ndir = "ci-cache"\n', encoding="utf-8")
    configured = load_config(tmp_path / "edgepipe.toml")
    assert cache_folder(configured) == tmp_path / "ci-cache"
    monkeypatch.setenv("EDGEPIPE_CACHE_DIR", str(tmp_path / "env"))
    assert cache_folder(configured) == tmp_path / "env"


def test_store_lookup_restore_round_trip(tmp_path: Path) -> None:
    outputs = tmp_path / "out"
    outputs.mkdir()
    (outputs / "report.json").write_text("{}", encoding="utf-8")
    (outputs / "model.onnx").write_bytes(b"\x00\x01")
    cache = BuildCache(tmp_path / "cache")
    key = CacheKey("host-cpu", "ab" * 32, {"why": "test"})
    assert cache.lookup(key) is None
    cache.store(key, sorted(outputs.iterdir()))
    entry = cache.lookup(key)
    assert entry is not None and json.loads((entry / "key.json").read_text()) == {"why": "test"}
    restored = cache.restore(entry, tmp_path / "build" / "host-cpu")
    assert sorted(p.name for p in restored.iterdir()) == ["model.onnx", "report.json"]
    assert (restored / "model.onnx").read_bytes() == b"\x00\x01"
    assert not [p for p in (tmp_path / "cache" / "v1").iterdir() if p.name.startswith(".")], "no staging left"


@pytest.mark.parametrize("split", ["selection", "train"])
def test_key_changes_with_the_ladder_splits(tmp_path: Path, split: str) -> None:
    """The selection and train splits decide the ladder's outcome: changing either must not hit an old entry."""
    (tmp_path / f"{split}.npz").write_bytes(b"v1")
    config = _config(tmp_path)
    with_split = config.model_copy(update={"data": config.data.model_copy(update={split: tmp_path / f"{split}.npz"})})
    before = _digest(with_split)
    assert before != _digest(config)
    (tmp_path / f"{split}.npz").write_bytes(b"v2")
    assert _digest(with_split) != before
