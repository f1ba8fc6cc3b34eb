"""Run under mpiexec by test_mpi.py: every rank connects collectively, reads
its slab of 'f' (split along axis 1) for versions 1 (put) and 2
(put_local, read from the writer's memory), checks every element, and
reports through metadata. Then a collective connect that fails must fail
alike on every rank.   mpi_reader.py CONNECTION_FILE"""
import sys

import numpy as np
from mpi4py import MPI

import cove

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
shape = (12, 10)
expected = {1: np.arange(120.0).reshape(shape), 2: -np.arange(120.0).reshape(shape)}

client = cove.connect(sys.argv[1], comm=comm, timeout=20)
lo = rank * shape[1] // size
hi = (rank + 1) * shape[1] // size
bad = 0
for version, whole in expected.items():
    order = "F" if rank % 2 else "C"
    got = client.get("f", version, (0, lo), (shape[0], hi - lo), order=order, timeout=20)
    bad += int(np.count_nonzero(got != whole[:, lo:hi]))
client.put_meta(f"checked.{rank}", 1, str(bad).encode())

# rank 0 fails to read the file: every rank raises the same error.
try:
    cove.connect(sys.argv[1] + ".missing", comm=comm, timeout=0.3)
    same_error = False
except cove.Unavailable as e:
    same_error = "missing" in str(e)
client.put_meta(f"same_error.{rank}", 1, b"yes" if same_error else b"no")
client.close()
sys.exit(0 if bad == 0 and same_error else 1)
