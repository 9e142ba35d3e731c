"""Checks that the .pyi stubs and the docstrings cover the public API."""

import ast
import inspect
import os
import unittest

import accelmem
from accelmem import backends, ir, passes, policy, sparse

MODULES = [backends, ir, passes, policy, sparse]


def stub_tree(module):
    path = os.path.join(os.path.dirname(module.__file__),
                        os.path.basename(module.__file__)[:-3] + ".pyi")
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def stub_names(tree):
    """Top-level names of a stub, and the members of each class."""
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets)
        elif isinstance(node, ast.ImportFrom):
            top.update(a.asname or a.name for a in node.names)
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    names.add(item.target.id)
            members[node.name] = names
    return top, members


class StubsTest(unittest.TestCase):

    def test_every_public_name_has_a_stub(self):
        # Every name in a module's __all__ (and every public member of its classes) is in its
        # .pyi.
        for module in MODULES:
            top, members = stub_names(stub_tree(module))
            for name in module.__all__:
                with self.subTest(module=module.__name__, name=name):
                    self.assertIn(name, top)
                obj = getattr(module, name)
                if inspect.isclass(obj) and not issubclass(obj, Exception):
                    for member in dir(obj):
                        if member.startswith("_"):
                            continue
                        with self.subTest(cls=name, member=member):
                            self.assertIn(member, members.get(name, set()))

    def test_every_public_name_is_documented(self):
        # Modules, functions, classes and their public members have docstrings.
        self.assertTrue(accelmem.__doc__)
        for module in MODULES:
            self.assertTrue(module.__doc__, module.__name__)
            for name in module.__all__:
                obj = getattr(module, name)
                if not (inspect.isclass(obj) or callable(obj)):
                    continue
                with self.subTest(module=module.__name__, name=name):
                    self.assertTrue(obj.__doc__)
                if inspect.isclass(obj) and not issubclass(obj, Exception):
                    for member in dir(obj):
                        if member.startswith("_"):
                            continue
                        with self.subTest(cls=name, member=member):
                            self.assertTrue(getattr(obj, member).__doc__)


if __name__ == "__main__":
    unittest.main()
