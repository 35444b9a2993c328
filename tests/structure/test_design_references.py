"""Every "DESIGN §N" cited in the tree names a numbered section of docs/design.md, the project's own design page.

A reference is `DESIGN §5`, `DESIGN §5.5` or a list such as `DESIGN §5.5, §8`; each number must be the number of a
heading of docs/design.md (`## 5. Grading`, `### 5.5 Noise …`). Checked over core/, app/, gui/, tests/, bench/,
resources/, packaging/ and docs/ (text files only).
"""

import os
import re
import tempfile
import unittest
from pathlib import Path

CHECKED_FOLDERS = ("core", "app", "gui", "tests", "bench", "resources", "packaging", "docs")
TEXT_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".py", ".md", ".sh", ".txt", ".cmake", ".json", ".in", ".ui"}
REFERENCE = re.compile(r"DESIGN\s+§(\d+(?:\.\d+)*)((?:\s*(?:,|and|/)\s*§\d+(?:\.\d+)*)*)")
FURTHER = re.compile(r"§(\d+(?:\.\d+)*)")
D = "DESIGN " + "§"  # the marker, split so that this file cites nothing
HEADING = re.compile(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s")


def design_sections(root: Path) -> set:
    page = root / "docs" / "design.md"
    return {m.group(1) for line in page.read_text(encoding="utf-8").splitlines() if (m := HEADING.match(line))}


def unresolved_references(root: Path) -> list:
    """Each reference that names no section of docs/design.md, as `file:line: DESIGN §N`."""
    sections = design_sections(root)
    found = []
    for folder in CHECKED_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
                continue
            name = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                for match in REFERENCE.finditer(line):
                    cited = [match.group(1)] + FURTHER.findall(match.group(2) or "")
                    for section in cited:
                        if section.rstrip(".") not in sections:
                            found.append(f"{name}:{number}: DESIGN §{section} is not a section of docs/design.md")
    return found


class DesignReferences(unittest.TestCase):
    def test_every_design_reference_in_the_tree_names_a_section_of_docs_design(self):
        root = Path(os.environ.get("MKB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
        self.assertTrue((root / "docs" / "design.md").is_file(), "docs/design.md is missing")
        found = unresolved_references(root)
        self.assertEqual(found, [], "\n" + "\n".join(found))


class ReferencesOnSmallTrees(unittest.TestCase):
    """The checker itself, on trees built here, so that the test above can fail. (`D` spells the marker so that these
    fixtures do not cite sections themselves.)"""

    def tree(self, files: dict) -> Path:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        root = Path(folder.name)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        return root

    def test_a_reference_to_a_missing_section_is_reported_and_known_ones_are_not(self):
        root = self.tree({"docs/design.md": "# D\n\n## 5. Grading\n\n### 5.5 Noise\n\n## 8. Metrics\n",
                          "core/a.cpp": f"// {D}5.5, §8 say why.\n// {D}5.1. The contract.\n",
                          "gui/b.cpp": f"// see {D}12\n"})
        self.assertEqual(unresolved_references(root),
                         [f"core/a.cpp:2: {D}5.1 is not a section of docs/design.md",
                          f"gui/b.cpp:1: {D}12 is not a section of docs/design.md"])

    def test_a_second_number_in_a_list_is_checked_too(self):
        root = self.tree({"docs/design.md": "## 5. Grading\n", "app/c.cpp": f"// {D}5 and §9\n"})
        self.assertEqual(unresolved_references(root), [f"app/c.cpp:1: {D}9 is not a section of docs/design.md"])


if __name__ == "__main__":
    unittest.main()
