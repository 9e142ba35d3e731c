"""accelmem.__version__ agrees with the version the wheel is built with (python/defs.bzl)."""

import sys
import unittest

import accelmem

EXPECTED = sys.argv.pop(1) if len(sys.argv) > 1 else None


class VersionTest(unittest.TestCase):

    def test_version_matches_build(self):
        # One version everywhere: the package and the wheel's METADATA.
        self.assertIsNotNone(EXPECTED)
        self.assertEqual(accelmem.__version__, EXPECTED)


if __name__ == "__main__":
    unittest.main()
