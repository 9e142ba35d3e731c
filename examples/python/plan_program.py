"""Plan the on-chip memory of a tile program for the Ascend 910B, from Python.

Parses a kernel, runs the memory pipeline (init-memref, memory-reuse, allocate-memory-addr)
with the sequential placement and with the lifetime planner, prints where each tile lives, and
proves both plans safe.
"""

from accelmem import backends, ir, passes

KERNEL = """\
@function(type=AIV)
def softmax_rows(x: Tensor[[64, 128], FP32], y: Tensor[[64, 128], FP32]) -> Tensor[[64, 128], FP32]:
    t: Tile[[64, 128], FP32, Vec] = tile.load(x, [0, 0], [64, 128])
    e: Tile[[64, 128], FP32, Vec] = tile.exp(t)
    s: Tile[[64, 128], FP32, Vec] = tile.add(e, e)
    q: Tile[[64, 128], FP32, Vec] = tile.mul(s, e)
    r: Tensor[[64, 128], FP32] = tile.store(q, [0, 0], y)
    return r
"""


def vec_usage(program):
    space = passes.memory_plan(program)[0]["spaces"]["Vec"]
    return space["high_water"], space["load"]


def main():
    program = ir.parse(KERNEL, filename="softmax_rows.tile", verify=True)
    print("backends:", ", ".join(backends.names()))
    print("Vec capacity on 910B: %d bytes" % backends.capacity("ascend910b", "Vec"))

    results = {}
    for planner in ("sequential", "greedy"):
        run = passes.pipeline(backend="ascend910b", planner=planner, verify=True,
                              verify_plan=True)
        planned = run(program)
        passes.verify_memory_plan(planned)
        high, load = vec_usage(planned)
        results[planner] = high
        print("\n%s: Vec high-water %d bytes (LOAD %d)" % (planner, high, load))
        for tile in planned.function("softmax_rows").tiles:
            m = tile.memref
            print("  %-2s %-10s %s %s id=%d addr=%d size=%d" %
                  (tile.name, tile.shape, tile.dtype, tile.space, m.id, m.address, m.size))

    print("\n" + planned.print())
    # The planner never needs more memory than the sequential placement.
    assert results["greedy"] <= results["sequential"], results
    # The text round-trips, and so does the protobuf form.
    assert ir.parse(planned.print()) == planned
    assert ir.Program.from_proto(planned.to_proto()) == planned


if __name__ == "__main__":
    main()
