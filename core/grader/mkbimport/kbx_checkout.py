"""A KernelBench-X checkout as the importer sees it: its task files by category, their problem numbers and families,
and the prompt material (description, signature) of data/kernelbenchx_v1.json."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from mkbimport.errors import TaskFileError

TASKS_DIR = Path("data") / "kernelbenchx"
PROMPTS_FILE = Path("data") / "kernelbenchx_v1.json"
FIRST_NUMBER = 100  # three-digit catalog numbers: 100-999
LAST_NUMBER = 999

# KBX's categories and the problem families they become (the folder under the output): snake_case of the name.
CATEGORY_FAMILIES = {
    "Activation": "activation", "Convolution": "convolution", "Fusion": "fusion", "Index": "index",
    "LinearAlgebra": "linear_algebra", "Loss": "loss", "MatrixMultiply": "matrix_multiply", "Math": "math",
    "Normalization": "normalization", "Optimizer": "optimizer", "Pooling": "pooling", "Quantization": "quantization",
    "Random": "random", "Reduce": "reduce", "SpatialOps": "spatial_ops",
}


@dataclass(frozen=True)
class TaskRef:
    category: str
    name: str
    path: Path
    number: int

    @property
    def label(self) -> str:
        return f"{self.category}/{self.name}"

    @property
    def family(self) -> str:
        return CATEGORY_FAMILIES.get(self.category, "")

    @property
    def slug(self) -> str:
        return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", self.name.lower())).strip("_") or "task"

    @property
    def file_name(self) -> str:
        return f"{self.number}_{self.slug}.py"


@dataclass(frozen=True)
class Prompt:
    description: str
    signature: str


class CheckoutError(Exception):
    """The checkout as a whole cannot be read."""


def list_tasks(checkout: Path) -> list[TaskRef]:
    """Every task file, sorted by category then name, numbered from 100 in that order. Skipped tasks keep their
    number, so a task that a later importer converts does not renumber the others."""
    root = checkout / TASKS_DIR
    if not checkout.is_dir():
        raise CheckoutError(f"{checkout}: no such folder (give the root of a KernelBench-X checkout)")
    if not root.is_dir():
        raise CheckoutError(f"{checkout}: not a KernelBench-X checkout (it has no {TASKS_DIR}/ folder of task "
                            f"categories)")
    paths = sorted(p for p in root.glob("*/*.py") if not p.name.startswith(("_", ".")) and p.is_file())
    if not paths:
        raise CheckoutError(f"{root}: holds no task files (<Category>/<task>.py)")
    if len(paths) > LAST_NUMBER - FIRST_NUMBER + 1:
        raise CheckoutError(f"{root}: {len(paths)} task files do not fit the catalog's numbers "
                            f"{FIRST_NUMBER}-{LAST_NUMBER}")
    return [TaskRef(category=p.parent.name, name=p.stem, path=p, number=FIRST_NUMBER + i) for i, p in enumerate(paths)]


def read_prompts(checkout: Path) -> dict[str, Prompt]:
    """The tasks' descriptions and signatures by name ("torch.nn.functional.gelu" read as "gelu"); empty when the
    checkout has no prompt file."""
    path = checkout / PROMPTS_FILE
    if not path.exists():
        return {}
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFileError(path, 1, f"cannot be read ({error})") from None
    except json.JSONDecodeError as error:
        raise TaskFileError(path, error.lineno, f"is not JSON: {error.msg}") from None
    if not isinstance(records, list):
        raise TaskFileError(path, 1, "must be a list of task records with name, description and func_inputs")
    prompts = {}
    for index, record in enumerate(records):
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise TaskFileError(path, 1, f"record {index} has no string 'name'")
        prompts[record["name"].rsplit(".", 1)[-1]] = Prompt(description=str(record.get("description") or ""),
                                         signature=str(record.get("func_inputs") or ""))
    return prompts
