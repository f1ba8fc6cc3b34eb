"""The heat workflow's analysis in Python: 3 mpi4py ranks read every step
of the C++ simulation's temperature field (examples/02_heat_workflow),
each a slab along y, check it against the simulation's own checksum,
compute statistics with numpy, and write a PNG every N steps with
matplotlib: the mid-plane slice and the running statistics.

    mpiexec -n 3 python analysis.py --n N --steps S [--plots DIR] [--every N]

The servers come from COVE_CONNECT (scripts/demo.sh --python runs it all).
Prints a table and a final 'verified: S of S steps' line; exit status 0
only when every step matched.
"""
import argparse
import pathlib
import sys

import numpy as np
from mpi4py import MPI

import cove

FIELD, CHECKSUM = "heat/temperature", "heat/checksum"


def element_hashes(first_index, values):
    """demo::element_hash of examples/02_heat_workflow/common.hpp, vectorised (uint64 wraps as in C++)."""
    index = np.arange(values.size, dtype=np.uint64) + np.uint64(first_index)
    with np.errstate(over="ignore"):
        x = values.reshape(-1).view(np.uint64) ^ (index * np.uint64(0x9E3779B97F4A7C15))
        x ^= x >> np.uint64(31)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(29)
    return x


def slab_checksum(slab, n, y0):
    """The checksum of a slab [0:n, y0:y0+ny, 0:n) of the n^3 field: each x-row of it is contiguous in y, z."""
    total = np.uint64(0)
    ny = slab.shape[1]
    with np.errstate(over="ignore"):
        for i in range(n):
            total += element_hashes((i * n + y0) * n, np.ascontiguousarray(slab[i])).sum(dtype=np.uint64)
    return total


def plot(path, step, plane, history):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    image = left.imshow(plane, origin="lower", cmap="inferno", vmin=0, vmax=max(1e-9, float(plane.max())))
    left.set_title(f"temperature, z = mid-plane, step {step}")
    left.set_xlabel("x")
    left.set_ylabel("y")
    fig.colorbar(image, ax=left)
    steps = [h[0] for h in history]
    right.plot(steps, [h[2] for h in history], label="max")
    right.plot(steps, [h[3] for h in history], label="mean")
    right.set_xlabel("step")
    right.set_yscale("log")
    right.legend()
    right.set_title("running statistics")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="cells along each side (as the simulation's)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds each get waits for its step")
    parser.add_argument("--plots", type=pathlib.Path, help="folder for the PNGs (none without it)")
    parser.add_argument("--every", type=int, default=5, help="a PNG every this many steps")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n = args.n
    y0, y1 = rank * n // size, (rank + 1) * n // size

    client = cove.connect(comm=comm)
    history, matched, failed = [], 0, False
    if rank == 0:
        print(f"{'step':>5} {'min':>12} {'max':>12} {'mean':>14} {'checksum':>18} {'match':>8}")
    for step in range(1, args.steps + 1):
        slab = client.get(FIELD, step, (0, y0, 0), (n, y1 - y0, n), timeout=args.timeout)
        local = np.array([slab.min(), slab.max(), slab.sum()])
        low = comm.reduce(local[0], op=MPI.MIN)
        high = comm.reduce(local[1], op=MPI.MAX)
        total = comm.reduce(local[2], op=MPI.SUM)
        mine = np.array([slab_checksum(slab, n, y0)], dtype=np.uint64)
        checksum = np.zeros(1, dtype=np.uint64)
        comm.Reduce(mine, checksum, op=MPI.SUM)
        if rank == 0:
            theirs = int(np.frombuffer(client.get_meta(CHECKSUM, step, timeout=args.timeout).data, dtype="<u8")[0])
            ok = theirs == int(checksum[0])
            matched += ok
            failed |= not ok
            mean = total / n**3
            history.append((step, low, high, mean))
            print(f"{step:>5} {low:>12.4f} {high:>12.4f} {mean:>14.6f}  {int(checksum[0]):016x} {'yes' if ok else 'NO':>8}")
            if args.plots and (step % args.every == 0 or step == args.steps):
                args.plots.mkdir(parents=True, exist_ok=True)
                # Any region of any version: here the z mid-plane, whichever ranks wrote it.
                plane = client.get(FIELD, step, (0, 0, n // 2), (n, n, 1))[:, :, 0]
                plot(args.plots / f"heat-{step:04d}.png", step, plane.T, history)
    failed = comm.bcast(failed)
    if rank == 0:
        word = "FAILED" if failed else "verified"
        print(f"{word}: {matched} of {args.steps} steps matched the simulation's checksum (Python analysis on {size} ranks)")
        if args.plots:
            print(f"plots: {len(list(args.plots.glob('heat-*.png')))} PNG files in {args.plots}")
    client.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
