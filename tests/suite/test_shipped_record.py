"""The shipped suite record: docs/suite.md is what `mkb suite table docs/suite.json` renders, byte for byte. So the
table a reader sees is the report's, and no problem file has changed since its check: the table refuses a report
whose problem files moved on. A problem edit (even a comment) lands with its GPU re-check (bench/suite_check_gpu.sh)
and the report and table it writes, or waits for one."""

import os
import subprocess
import tempfile
import unittest

SOURCE = os.environ.get("MKB_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MKB = os.environ.get("MKB_CLI", "mkb")


class ShippedRecordTest(unittest.TestCase):
    def test_the_table_renders_from_the_report_byte_for_byte(self) -> None:
        report = os.path.join(SOURCE, "docs", "suite.json")
        with tempfile.TemporaryDirectory() as work:
            rendered = os.path.join(work, "suite.md")
            done = subprocess.run([MKB, "suite", "table", report, "--output", rendered], capture_output=True,
                                  text=True, timeout=120, env={**os.environ, "MKB_DATA_DIR": SOURCE})
            self.assertEqual(done.returncode, 0, "docs/suite.json no longer renders: " + done.stderr.strip())
            with open(rendered, "rb") as fresh, open(os.path.join(SOURCE, "docs", "suite.md"), "rb") as shipped:
                self.assertTrue(fresh.read() == shipped.read(),
                                "docs/suite.md is not what `mkb suite table docs/suite.json` renders: render it again")


if __name__ == "__main__":
    unittest.main()
