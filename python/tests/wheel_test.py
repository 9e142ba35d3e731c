"""Installs the wheel into a fresh virtual environment, offline, and imports it."""

import glob
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile


def find_wheel():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = glob.glob(os.path.join(here, "..", "accelmem-*.whl"))
    runfiles = os.environ.get("TEST_SRCDIR")
    if runfiles:
        candidates += glob.glob(os.path.join(runfiles, "accelmem", "python", "accelmem-*.whl"))
    if not candidates:
        raise AssertionError("no wheel in the runfiles")
    return candidates[0]


def find_examples():
    runfiles = os.environ.get("TEST_SRCDIR", "")
    found = sorted(glob.glob(os.path.join(runfiles, "accelmem", "examples", "python", "*.py")))
    if len(found) != 3:
        raise AssertionError("expected the three examples in the runfiles, found %s" % found)
    return found


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # Under --config=asan the wheel holds an ASan-built extension (see testing/launcher.py).
    preload = os.environ.get("ACCELMEM_ASAN_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


class WheelTest(unittest.TestCase):

    def test_wheel_contents(self):
        # The wheel holds the package, the extension, the stubs and a RECORD listing them all.
        with zipfile.ZipFile(find_wheel()) as whl:
            names = set(whl.namelist())
            record = whl.read([n for n in names if n.endswith(".dist-info/RECORD")][0]).decode()
            wheel = whl.read([n for n in names if n.endswith(".dist-info/WHEEL")][0]).decode()
        for name in ["accelmem/__init__.py", "accelmem/_accelmem.so", "accelmem/sparse.pyi",
                     "accelmem/py.typed"]:
            self.assertIn(name, names)
        listed = {line.split(",")[0] for line in record.splitlines()}
        self.assertEqual(listed, names)
        self.assertIn("Root-Is-Purelib: false", wheel)

    def test_pip_install_and_import(self):
        # pip installs the wheel without an index and the installed package works.
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as tmp:
            venv = os.path.join(tmp, "venv")
            env = clean_env()
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                           check=True, env=env, cwd=tmp)
            python = os.path.join(venv, "bin", "python")
            subprocess.run([python, "-m", "pip", "install", "--no-index", "--quiet",
                            find_wheel()], check=True, env=env, cwd=tmp)
            script = (
                "import accelmem, numpy as np\n"
                "from accelmem import ir, passes, policy, sparse\n"
                "print(accelmem.__file__)\n"
                "print(accelmem.__version__)\n"
                "p = passes.pipeline()(ir.parse(\"\"\"%s\"\"\"))\n"
                "print(policy.place([0, 1], [2, 3], [8, 8]).tolist())\n"
                "t = sparse.SNodeTree(); t.root.pointer(0, 4).place('x', 'f32')\n"
                "r = sparse.Runtime(t); r.write('x', [2], 3.0); print(r.read('x', [2])[0])\n"
            ) % "@function(type=AIV)\ndef f(x: Tensor[[8], FP32]) -> Tensor[[8], FP32]:\n    return x\n"
            out = subprocess.run([python, "-c", script], check=True, env=env, cwd=tmp,
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout
            lines = out.splitlines()
            self.assertTrue(lines[0].startswith(os.path.realpath(venv)) or
                            lines[0].startswith(venv), lines[0])
            self.assertEqual(lines[1], os.environ["ACCELMEM_EXPECTED_VERSION"])
            self.assertEqual(lines[2], "[0, 8]")
            self.assertEqual(lines[3], "3.0")
            # The examples run against the installed package alone (from a folder outside the
            # runfiles, so nothing but the venv can provide `accelmem`).
            for example in find_examples():
                copy = os.path.join(tmp, os.path.basename(example))
                with open(example) as src, open(copy, "w") as dst:
                    dst.write(src.read())
                run = subprocess.run([python, copy], env=env, cwd=tmp, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, universal_newlines=True)
                self.assertEqual(run.returncode, 0, "%s failed:\n%s" % (example, run.stdout))


if __name__ == "__main__":
    sys.exit(unittest.main())
