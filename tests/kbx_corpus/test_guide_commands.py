"""guide: every command docs/guide/kernelbenchx.md shows runs on the fixtures, in the guide's order, in one folder, and
prints what the guide says it prints (numbers aside): a page that drifts from the tool fails here, not in a reader's
terminal. Commands that need a GPU host or a real KernelBench-X checkout are named and left out."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.environ.get("MKB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GUIDE = os.path.join(SOURCE, "docs", "guide", "kernelbenchx.md")
MKB = os.environ.get("MKB_CLI", "mkb")

# What the guide shows but this machine cannot run, with why; matched against the command line.
NOT_HERE = (("on the GPU host", "needs a GPU host"), ("~/", "needs a real KernelBench-X checkout"),
            ("--golden golden", "reads the golden timings the GPU-host command before it writes"))
ELIDED = ("…", "...")


def shown_blocks(text: str) -> list[tuple[str, list[str]]]:
    """The guide's fenced blocks in order, each as (kind, lines): kind 'shell' when its first line starts with '$ '."""
    blocks, current, inside = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            if inside:
                blocks.append(("shell" if current and current[0].startswith("$ ") else "text", current))
            current, inside = [], not inside
            continue
        if inside:
            current.append(line)
    return blocks


def steps(blocks: list[tuple[str, list[str]]]) -> list[dict]:
    """Each '$ ' command with the lines shown under it and the text block before it (a file the guide writes)."""
    result, last_text = [], None
    for kind, lines in blocks:
        if kind == "text":
            last_text = lines
            continue
        for line in lines:
            if line.startswith("$ "):
                result.append({"command": line[2:], "shown": [], "file": last_text})
            elif result:
                result[-1]["shown"].append(line)
    return result


def masked(line: str) -> str:
    """A line with its numbers as '#': timings and speedups differ from run to run, the words must not."""
    return re.sub(r"\d+(\.\d+)?(e-?\d+)?", "#", line.rstrip())


class GuideCommandsTest(unittest.TestCase):
    def test_every_command_of_the_kernelbenchx_guide_runs_and_prints_what_it_shows(self) -> None:
        with open(GUIDE, encoding="utf-8") as handle:
            all_steps = steps(shown_blocks(handle.read()))
        self.assertGreaterEqual(len(all_steps), 15, "the guide shows its commands in '$ ' blocks")
        work = tempfile.mkdtemp(prefix="mkb-guide-")
        self.addCleanup(shutil.rmtree, work, True)
        for name in ("tests", "bench"):
            os.symlink(os.path.join(SOURCE, name), os.path.join(work, name))
        bin_dir = os.path.join(work, ".bin")
        os.mkdir(bin_dir)
        os.symlink(os.path.abspath(MKB) if os.sep in MKB else shutil.which(MKB), os.path.join(bin_dir, "mkb"))
        env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "MKB_SOURCE_DIR": SOURCE,
               "PYTHONDONTWRITEBYTECODE": "1"}
        ran, left_out, last_code = 0, [], 0
        for step in all_steps:
            command = step["command"]
            if command == "echo $?":
                self.assertEqual(str(last_code), step["shown"][0].strip(), "the exit code the guide shows")
                continue
            why = next((reason for mark, reason in NOT_HERE if mark in command), None)
            if why:
                left_out.append(f"{command} ({why})")
                continue
            if "kernel.py" in command.split() and not os.path.exists(os.path.join(work, "kernel.py")):
                self.assertIsNotNone(step["file"], f"{command}: the guide shows no kernel.py before it")
                with open(os.path.join(work, "kernel.py"), "w", encoding="utf-8") as handle:
                    handle.write("\n".join(step["file"]) + "\n")
            done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=600)
            last_code = done.returncode
            ran += 1
            printed = [masked(line) for line in (done.stdout + done.stderr).splitlines()]  # a terminal shows both
            for line in step["shown"]:
                if line.strip() in ELIDED or not line.strip():
                    continue
                cut = line.rstrip().endswith(ELIDED)  # a line the guide cut short matches as a prefix
                wanted = masked(line.rstrip().rstrip(".…")) if cut else masked(line)
                found = any(text.startswith(wanted) for text in printed) if cut else wanted in printed
                self.assertTrue(found, f"`{command}` no longer prints the guide's line:\n  {line}\nit printed:\n"
                                + done.stdout + done.stderr[-2000:])
            following = all_steps[all_steps.index(step) + 1:all_steps.index(step) + 2]
            if done.returncode != 0 and not (following and following[0]["command"] == "echo $?"):
                self.fail(f"`{command}` exited {done.returncode}, which the guide does not show:\n"
                          + done.stdout[-2000:] + done.stderr[-2000:])
        print(f"\n{ran} commands ran; left out: " + "; ".join(left_out))
        self.assertGreaterEqual(ran, 15)


if __name__ == "__main__":
    unittest.main()
