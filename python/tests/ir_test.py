"""Tests of accelmem.ir: parse, print, protobuf, errors and program views."""

import glob
import os
import pickle
import unittest

from accelmem import ir

LOOP = """\
@function(type=AIV)
def accumulate(x: Tensor[[64, 64], FP32], out: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    x0: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    other: Tile[[64, 64], FP32, Vec] = tile.exp(x0)
    for i, (acc,) in range(0, 4, 1, init=(x0,)) -> (acc_out: Tile[[64, 64], FP32, Vec],):
        nxt: Tile[[64, 64], FP32, Vec] = tile.add(acc, other)
        yield (nxt,)
    r: Tensor[[64, 64], FP32] = tile.store(acc_out, [0, 0], out)
    return r
"""

PLANNED = """\
@function(type=InCore)
def seed(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 8192, 1)
    tile_a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    tile_b: Tile[[32, 64], FP32, memref=mem_vec_1] = tile.load(x, [0, 0], [32, 64])
    r: Tensor[[64, 64], FP32] = tile.store(tile_a, [0, 0], y)
    return r
"""


def corpus_files():
    """The IR corpus (//ir:corpus) in the runfiles."""
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [os.path.join(here, "..", "..", "ir", "testdata")]
    runfiles = os.environ.get("TEST_SRCDIR")
    if runfiles:
        roots.insert(0, os.path.join(runfiles, "accelmem", "ir", "testdata"))
    for root in roots:
        files = sorted(glob.glob(os.path.join(root, "*.tile")))
        if files:
            return files
    return []


class ParseTest(unittest.TestCase):

    def test_parse_print_round_trip(self):
        # Printing a parsed program gives text that parses to an equal program and prints
        # identically.
        p = ir.parse(LOOP, filename="loop.tile")
        text = p.print()
        q = ir.parse(text)
        self.assertEqual(p, q)
        self.assertEqual(q.print(), text)
        self.assertEqual(str(p), text)

    def test_proto_round_trip(self):
        # to_proto / from_proto keeps the program (MemRefs and addresses included).
        p = ir.parse(PLANNED)
        data = p.to_proto()
        self.assertIsInstance(data, bytes)
        q = ir.Program.from_proto(data)
        self.assertTrue(p.structurally_equal(q))
        self.assertEqual(q.print(), p.print())

    def test_from_proto_rejects_garbage(self):
        # Malformed bytes raise ValueError, never crash.
        with self.assertRaises(ValueError):
            ir.Program.from_proto(b"\xff\xff\xff\xff garbage")

    def test_corpus_round_trips(self):
        # Every corpus file that parses round-trips through text and protobuf.
        files = corpus_files()
        self.assertGreater(len(files), 5, "the //ir:corpus files are missing")
        parsed = 0
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            try:
                p = ir.parse(text, filename=path)
            except ir.ParseError:
                continue  # error cases of the corpus
            parsed += 1
            with self.subTest(path=os.path.basename(path)):
                self.assertEqual(ir.parse(p.print()), p)
                self.assertEqual(ir.Program.from_proto(p.to_proto()).print(), p.print())
        self.assertGreater(parsed, 5)


class ParseErrorTest(unittest.TestCase):

    def test_error_location(self):
        # A syntax error carries file, line, column and the bare message.
        text = LOOP.replace("tile.exp(x0)", "tile.exp(x0 x0)")
        with self.assertRaises(ir.ParseError) as cm:
            ir.parse(text, filename="dir:with:colons/k.tile")
        e = cm.exception
        self.assertEqual(e.file, "dir:with:colons/k.tile")
        self.assertEqual(e.line, 4)
        self.assertEqual(e.column, 52)
        self.assertTrue(e.message)
        self.assertNotIn("error:", e.message)
        self.assertEqual(str(e), "%s:%d:%d: error: %s" % (e.file, e.line, e.column, e.message))
        self.assertIsInstance(e, ValueError)

    def test_undefined_name(self):
        # A use before definition is reported at the use.
        text = LOOP.replace("tile.exp(x0)", "tile.exp(nope)")
        with self.assertRaises(ir.ParseError) as cm:
            ir.parse(text, filename="k.tile")
        self.assertEqual(cm.exception.line, 4)
        self.assertIn("nope", cm.exception.message)

    def test_verify_option(self):
        # verify=True also runs the verifier: a MemRef larger than its root is rejected.
        bad = PLANNED.replace("tile.alloc(Vec, 16384, 8192, 1)", "tile.alloc(Vec, 16384, 64, 1)")
        ir.parse(bad)  # the parser alone accepts it
        with self.assertRaises(ir.ParseError):
            ir.parse(bad, verify=True)

    def test_error_pickles(self):
        # ParseError keeps its fields through pickling (multiprocessing).
        e = ir.ParseError("boom", "f.tile", 3, 4)
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.message, f.file, f.line, f.column), ("boom", "f.tile", 3, 4))


class ViewTest(unittest.TestCase):

    def test_function_and_statements(self):
        # Functions list their parameters, statements and nested bodies.
        p = ir.parse(LOOP)
        self.assertEqual(len(p.functions), 1)
        f = p.function("accumulate")
        self.assertEqual(f.name, "accumulate")
        self.assertEqual(f.type, "AIV")
        self.assertEqual([v.name for v in f.params], ["x", "out"])
        self.assertEqual(f.params[0].kind, "tensor")
        kinds = [s.kind for s in f.statements]
        self.assertEqual(kinds, ["assign", "assign", "for", "assign", "return"])
        loop = f.statements[2]
        self.assertEqual([s.kind for s in loop.body], ["assign", "yield"])
        self.assertEqual(loop.body[0].op, "tile.add")
        self.assertEqual([v.name for v in loop.results], ["acc_out"])
        self.assertEqual(f.statements[1].line, 4)
        with self.assertRaises(KeyError):
            p.function("missing")

    def test_tiles_before_planning(self):
        # Before init-memref tiles have shape, dtype and space but no MemRef.
        f = ir.parse(LOOP).functions[0]
        self.assertEqual([t.name for t in f.tiles], ["x0", "other", "acc", "nxt", "acc_out"])
        t = f.tiles[0]
        self.assertEqual(t.shape, (64, 64))
        self.assertEqual(t.dtype, "FP32")
        self.assertEqual(t.space, "Vec")
        self.assertIsNone(t.memref)

    def test_tiles_after_planning(self):
        # Planned tiles expose MemRef id, space, address and size; allocs list the roots.
        f = ir.parse(PLANNED).functions[0]
        b = [t for t in f.tiles if t.name == "tile_b"][0]
        self.assertEqual(b.shape, (32, 64))
        self.assertEqual(b.memref.id, 1)
        self.assertEqual(b.memref.space, "Vec")
        self.assertEqual(b.memref.address, 16384)
        self.assertEqual(b.memref.size, 8192)
        self.assertTrue(b.memref.is_root)
        self.assertEqual([(m.name, m.address, m.size) for m in f.memrefs],
                         [("mem_vec_0", 0, 16384), ("mem_vec_1", 16384, 8192)])

    def test_layouts_slots_and_declared_allocations(self):
        # A tile's stated layout, its slot and the slot count of its root, and whether the root
        # is an allocation the author declared.
        f = ir.parse("""@function(type=AIV)
def f(x: Tensor[[4], FP32]):
    stash: MemRefType = tile.alloc(Vec, -1, 32, 0, slots=2, declared=1)
    plain: MemRefType = tile.alloc(Vec, -1, 16, 1)
    for i in range(0, 4, 1, pipeline=2):
        a: Tile[[4], FP32, memref=stash[1], layout=NZ] = tile.load(x, [0], [4])
    b: Tile[[4], FP32, memref=plain] = tile.load(x, [0], [4])
    return
""").functions[0]
        a, b = [t for t in f.tiles if t.name == "a"][0], [t for t in f.tiles if t.name == "b"][0]
        self.assertEqual((a.layout, a.memref.slot, a.memref.slots, a.memref.offset), ("NZ", 1, 2, 16))
        self.assertTrue(a.memref.declared)
        self.assertTrue(a.memref.root.declared)
        self.assertEqual((b.layout, b.memref.slot, b.memref.slots, b.memref.declared),
                         (None, None, 0, False))

    def test_views_outlive_program(self):
        # A view keeps its node alive after the program object is gone.
        f = ir.parse(LOOP).functions[0]
        tiles = f.tiles
        del f
        self.assertEqual(tiles[-1].name, "acc_out")


if __name__ == "__main__":
    unittest.main()
