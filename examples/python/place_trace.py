"""Place the buffers of an allocation trace with the lifetime planner.

Builds a deterministic trace (the activations of a small layered network: each layer's output
lives until the next two layers have read it, plus short-lived scratch buffers), places it with
greedy and with search, checks the placements independently, and compares with LOAD.
"""

import numpy as np

from accelmem import policy


def make_trace(layers=200, seed=0):
    rng = np.random.default_rng(seed)
    lower, upper, size = [], [], []
    for i in range(layers):
        lower.append(i)                       # output of layer i
        upper.append(i + 3)
        size.append(int(rng.choice([1, 2, 4, 8])) * 4096)
        lower.append(i)                       # scratch of layer i
        upper.append(i + 1)
        size.append(int(rng.integers(1, 64)) * 512)
    return (np.array(lower, np.int64), np.array(upper, np.int64), np.array(size, np.int64))


def main():
    lower, upper, size = make_trace()
    load = policy.load(lower, upper, size)
    print("%d buffers, %d bytes in total, LOAD %d" % (len(size), size.sum(), load))

    offsets = policy.place(lower, upper, size, alignment=32)
    policy.check(lower, upper, size, offsets, alignment=32)
    greedy = policy.height(lower, upper, size, offsets)
    print("greedy: height %d (%.2f%% above LOAD)" % (greedy, 100.0 * (greedy - load) / load))

    plan = policy.plan(lower, upper, size, alignment=32, mode="search", budget_ms=200)
    policy.check(lower, upper, size, plan.offsets, alignment=32)
    print("search: height %d, lower bound %d, method %s" %
          (plan.height, plan.lower_bound, plan.method))

    assert load <= plan.height <= greedy
    # A deliberately broken placement is caught: everything at offset 0.
    try:
        policy.check(lower, upper, size, np.zeros_like(offsets))
    except policy.PlacementError as e:
        print("checker: %s" % str(e).split(" are both")[0])
    else:
        raise AssertionError("overlap not detected")


if __name__ == "__main__":
    main()
