"""The two ways a task can fail to import: a malformed file (an error) and a task the format cannot hold (a skip)."""

from __future__ import annotations

from pathlib import Path


class TaskFileError(Exception):
    """A task file that is not what KernelBench-X's layout promises; names the file and the line."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


class Unconvertible(Exception):
    """A well-formed task that cannot become a problem file; the message is the one-line reason."""
