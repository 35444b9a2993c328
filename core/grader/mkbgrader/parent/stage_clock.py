"""What each stage of a child cost: the `stage_s` of a verdict, a re-timing and a pool, from the child's stage
messages as the parent receives them (docs/grader-protocol.md)."""

from __future__ import annotations

import time
from typing import Callable, Optional


class StageClock:
    """Called with every message of a child; notes when each stage began and passes the stage on to `on_stage`."""

    def __init__(self, on_stage: Optional[Callable[[str], None]] = None) -> None:
        self.on_stage = on_stage
        self.marks: list[tuple[str, float]] = []

    def __call__(self, message: dict) -> None:
        if message.get("t") == "stage":
            stage = str(message.get("stage"))
            self.marks.append((stage, time.monotonic()))
            if self.on_stage:
                self.on_stage(stage)

    def seconds(self) -> dict[str, float]:
        """Seconds per stage, from its start to the next stage's (the last one's to now); a stage entered twice
        counts both times."""
        ends = [when for _, when in self.marks[1:]] + [time.monotonic()]
        spent: dict[str, float] = {}
        for (stage, when), end in zip(self.marks, ends):
            spent[stage] = spent.get(stage, 0.0) + end - when
        return {stage: round(value, 3) for stage, value in spent.items()}
