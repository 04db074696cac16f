"""README.md stays a short, true front page: the two set-up commands first, under 200 lines, its Layout naming
what edgepipe/ holds; docs/ARCHITECTURE.md's layer map is the one .importlinter checks."""

from __future__ import annotations

import configparser
import re

from edgepipe.config import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    return text.partition(f"\n## {title}\n")[2].partition("\n## ")[0]


def test_readme_starts_with_the_two_set_up_commands_and_stays_short() -> None:
    first_block = README.partition("```bash\n")[2].partition("```")[0]
    assert first_block.splitlines() == ["pip install -e . && edgepipe build", "pip install -e '.[test]' && pytest"]
    assert README.index("```bash") < README.index("\n## ")
    assert len(README.splitlines()) <= 200


def test_readme_layout_names_everything_in_the_package() -> None:
    layout = _section(README, "Layout")
    entries = sorted(p.name for p in (PROJECT_ROOT / "edgepipe").iterdir()
                     if p.name not in ("__init__.py", "__pycache__") and (p.is_dir() or p.suffix == ".py"))
    missing = [name for name in entries
               if not re.search(rf"(?<![\w/]){re.escape(name if name.endswith('.py') else name + '/')}", layout)]
    assert not missing, f"README's Layout does not name {missing}"


def test_architecture_lists_the_layers_importlinter_checks_in_order() -> None:
    parser = configparser.ConfigParser()
    parser.read(PROJECT_ROOT / ".importlinter", encoding="utf-8")
    checked = [line.strip() for line in parser["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    doc = (PROJECT_ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = _section(doc, "The layer map")
    first_cells = [re.split(r"(?<!\\)\|", row)[1] for row in table.splitlines() if row.startswith("| `edgepipe")]
    documented = [" | ".join(re.findall(r"`(edgepipe[\w.]*)`", cell)) for cell in first_cells]
    assert documented == checked
