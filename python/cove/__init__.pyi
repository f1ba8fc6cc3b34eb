"""Type stubs of the package cove (docs/python.md)."""
import os
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

# An array by the buffer protocol, __array_interface__ or DLPack, in host memory.
ArrayLike = Any
DTypeLike = npt.DTypeLike
Index = Union[int, Sequence[int]]  # an int: one dimension

class Error(Exception):
    """A Cove call failed; ``code`` and ``status`` say how."""
    code: int
    status: str

class InvalidArgument(Error, ValueError): ...
class OutOfRange(Error, ValueError): ...
class Overflow(Error, OverflowError): ...
class NotFound(Error, LookupError): ...
class AlreadyExists(Error): ...
class Timeout(Error, TimeoutError): ...
class NoMemory(Error, MemoryError): ...
class Unavailable(Error, ConnectionError): ...
class Protocol(Error): ...
class Unsupported(Error): ...
class Cancelled(Error): ...
class Internal(Error): ...
class PermissionDenied(Error, PermissionError): ...

class Metadata(NamedTuple):
    """A metadata blob and its version."""
    version: int
    data: bytes

class WorkerSlot(NamedTuple):
    """A worker slot taken by Client.become_worker."""
    slot: int
    slots: int
    workers: int

class ReplicaInfo:
    start: Tuple[int, ...]
    count: Tuple[int, ...]
    layout: str
    bytes: int
    ready: bool

class PieceInfo:
    start: Tuple[int, ...]
    count: Tuple[int, ...]
    bytes: int
    holder: str
    on_server: bool
    replicas: list[ReplicaInfo]
    copy: str

class VersionInfo:
    version: int
    pieces: list[PieceInfo]
    sealed: bool

class VariableInfo:
    name: str
    dtype: str
    ndim: int
    shape: Optional[Tuple[int, ...]]
    versions: list[VersionInfo]
    reorg: Optional[str]
    layouts: list[str]
    fill: Optional[bytes]

class ServerStats:
    variables: int
    versions: int
    pieces: int
    owned_bytes: int
    local_bytes: int
    memory_budget: int
    requests: int
    bytes_in: int
    bytes_out: int
    replicas: int
    replica_bytes: int
    reorganizations: int
    replica_answers: int
    patterns: int
    metadata: int
    metadata_bytes: int
    lost_pieces: int
    replication: int
    copies: int
    copy_bytes: int
    single_copies: int
    moved_pieces: int
    lost_members: int
    worker_slots: int
    workers: int
    placements: int
    placement_fallbacks: int
    task_reports: int
    parked_gets: int
    clients: int
    uptime_ms: int
    reachable: bool

class PutHandle:
    """The completion of a put_async(); the client keeps its array until the put ends."""
    def test(self) -> bool:
        """True once the put has ended (done or failed); never blocks."""
    def wait(self) -> None:
        """Blocks until the put has ended; raises what the put raised."""

class Subscription:
    """A standing interest in a region; a context manager whose exit cancels it."""
    def cancel(self) -> None:
        """Stops the callbacks; waits for a running one (not from inside the callback). Idempotent."""
    def __enter__(self) -> "Subscription": ...
    def __exit__(self, *args: Any) -> None: ...

class Step:
    """One step of Client.steps(): its version and the variables it covers."""
    version: int
    vars: Tuple[str, ...]
    def get(self, var: Optional[str] = None, start: Optional[Index] = None, count: Optional[Index] = None,
            **kwargs: Any) -> np.ndarray:
        """The step's data of `var` (default: the walk's only variable) in the walk's region or (start, count)."""

class VersionView:
    """One version of a Variable: index it to read (h5py-style slicing), assign to an index to write."""
    variable: "Variable"
    version: int
    shape: Optional[Tuple[int, ...]]
    dtype: np.dtype
    def read(self, **kwargs: Any) -> np.ndarray: ...
    def __getitem__(self, key: Any) -> np.ndarray: ...
    def __setitem__(self, key: Any, array: ArrayLike) -> None: ...

class Variable:
    """A variable bound to a client (Client.variable): definition, versions, slicing by version."""
    name: str
    dtype: np.dtype
    ndim: int
    shape: Optional[Tuple[int, ...]]
    timeout: Optional[float]
    @property
    def versions(self) -> List[int]: ...
    @property
    def latest(self) -> Optional[int]: ...
    def __getitem__(self, version: int) -> VersionView: ...
    def put(self, version: int, array: ArrayLike, start: Optional[Index] = None) -> None: ...
    def get(self, version: int, start: Optional[Index] = None, count: Optional[Index] = None,
            **kwargs: Any) -> np.ndarray: ...
    def steps(self, start: Optional[Index] = None, count: Optional[Index] = None, **kwargs: Any) -> Iterator[Step]: ...

class Client:
    """A connection to a Cove server group (cove.connect). Thread-safe; a context manager whose exit closes it."""
    servers: list[str]
    address: str
    held_locally: int
    pending_puts: int
    def close(self) -> None:
        """Waits for puts in flight, releases put_local pieces (after their readers) and disconnects."""
    def __enter__(self) -> "Client": ...
    def __exit__(self, *args: Any) -> None: ...
    def define(self, name: str, dtype: DTypeLike, shape: Optional[Index] = None, *, ndim: Optional[int] = None,
               reorg: Optional[str] = None, layouts: Optional[Sequence[str]] = None, fill: Any = None) -> None:
        """Defines a variable (again with the same definition: no-op; another: InvalidArgument). fill: what
        uncovered cells of a sealed version read as (one element of dtype, or its bytes)."""
    def definition(self, var: str, timeout: Optional[float] = 0.0) -> Tuple[np.dtype, int, Optional[Tuple[int, ...]]]:
        """(dtype, ndim, shape or None) of a variable, waiting up to `timeout` for it to be defined (Timeout);
        with 0, NotFound at once."""
    def seal(self, var: str, version: int) -> bool:
        """Seals a version: gets never wait, puts are refused. Returns whether it was sealed already."""
    def derive(self, vars: Union[str, Sequence[str]], source: int, version: int) -> int:
        """Version `version` starts as version `source`, sharing its pieces; returns the pieces shared."""
    def put(self, var: str, version: int, start: Index, array: ArrayLike) -> None:
        """Stores a copy of `array` (any dense axis order) at `start`; the array may be reused on return."""
    def put_local(self, var: str, version: int, start: Index, array: ArrayLike) -> None:
        """Indexes `array` where it is: readers copy from it. Held (and not resizable) until release()."""
    def release(self, var: str, version: int, start: Index, count: Index) -> int:
        """Withdraws a put_local piece once no reader copies from it; returns the pieces dropped."""
    def put_async(self, var: str, version: int, start: Index, array: ArrayLike) -> PutHandle:
        """Like put() but returns at once; the array is kept until the put ends."""
    def get(self, var: str, version: int, start: Index, count: Index, dtype: Optional[DTypeLike] = None,
            out: Optional[ArrayLike] = None, order: str = "C", timeout: Optional[float] = None) -> np.ndarray:
        """The region of `version` as a numpy array in `order` ('C' or 'F'), converted to `dtype` if given,
        or written into `out`. timeout in seconds: 0 answers at once (NotFound), None waits as long as it takes."""
    def get_latest(self, var: str, start: Index, count: Index, dtype: Optional[DTypeLike] = None,
                   out: Optional[ArrayLike] = None, order: str = "C",
                   timeout: Optional[float] = None) -> Tuple[int, np.ndarray]:
        """(version, array) of the newest version covering the region."""
    def subscribe(self, var: str, region: Tuple[Index, Index],
                  callback: Callable[[str, int], Any]) -> Subscription:
        """Calls callback(var, version), with the GIL, on the subscription's thread, for new versions covering
        region = (start, count). An exception in it is reported (sys.unraisablehook) and the subscription goes on."""
    def put_meta(self, name: str, version: int, data: Union[bytes, bytearray, memoryview, ArrayLike]) -> None:
        """Stores a small blob (at most 1 MiB) as version `version` of `name`."""
    def get_meta(self, name: str, version: int, timeout: Optional[float] = None) -> Metadata: ...
    def get_meta_next(self, name: str, after: int, timeout: Optional[float] = None) -> Metadata: ...
    def get_meta_latest(self, name: str, timeout: Optional[float] = None) -> Metadata: ...
    def lock_read(self, name: str, start: Sequence[int] = (), count: Sequence[int] = (), timeout: float = 30.0) -> None:
        """A shared lock on `name` or the region (start, count) of it; Timeout after `timeout` seconds (0: only if
        free now). Waiting requests go in arrival order; the lock lasts until unlock() or until the client closes."""
    def lock_write(self, name: str, start: Sequence[int] = (), count: Sequence[int] = (), timeout: float = 30.0) -> None:
        """An exclusive lock, as lock_read() takes a shared one."""
    def unlock(self, name: str, start: Sequence[int] = (), count: Sequence[int] = ()) -> None:
        """Releases this client's lock on exactly that region (NotFound, PermissionDenied)."""
    def become_worker(self, server: int, name: str) -> WorkerSlot:
        """Takes one of server `server`'s worker slots until the client closes (OutOfRange, InvalidArgument,
        Unavailable when every slot is taken, AlreadyExists)."""
    def locate(self, var: str, version: int, start: Index, count: Index,
               timeout: Optional[float] = None) -> list[int]:
        """The bytes of the region of `version` held by each server, in `servers` order; waits as get() does."""
    def bytes_read(self) -> list[int]:
        """The bytes this client's gets have read so far from each server, in `servers` order."""
    def put_on(self, server: int, var: str, version: int, start: Index, array: ArrayLike) -> None:
        """put() onto server `server` instead of the one the sharding names (OutOfRange outside the group)."""
    def put_placed(self, var: str, version: int, start: Index, array: ArrayLike) -> int:
        """put() onto the server the placement component chooses (else where put() puts it); returns its index."""
    def task_done(self, var: str, start: Index, count: Index, seconds: float) -> None:
        """Reports the execution time of the consumer task reading the region (InvalidArgument for < 0 or NaN)."""
    def placements(self, max: int = 16) -> List[Dict[str, Any]]:
        """Server 0's newest placement decisions, oldest first, one dict each (docs/placement.md)."""
    def monitor_reads(self, on: bool) -> None:
        """Task times by read intervals: each get ends the previous get's task (task_done of its region)."""
    def end_read_task(self) -> None:
        """Ends the last get's task under monitor_reads."""
    def register_dataflow(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Hands the consumer's dataflow graph (.json or .toml) to the placement component (NotFound,
        InvalidArgument naming the file and the culprit, e.g. a cycle)."""
    def steps(self, vars: Union[str, Sequence[str]], start: Optional[Index] = None, count: Optional[Index] = None, *,
              regions: Optional[Dict[str, Tuple[Index, Index]]] = None, every: int = 1, newest: bool = False,
              after: Optional[int] = None, timeout: Optional[float] = None) -> Iterator[Step]:
        """Yields each complete step of `vars` in version order (every n-th, or the newest), waiting up to
        `timeout` seconds for each; ends when a writer calls end_steps()."""
    def end_steps(self, vars: Union[str, Sequence[str]], last: Optional[int] = None) -> None:
        """Ends the stream of `vars` at `last` (default: each variable's newest version now)."""
    def variable(self, name: str, timeout: Optional[float] = None) -> Variable:
        """A Variable for `name`, waiting up to `timeout` seconds for its definition; its reads wait as long."""
    def latest(self, var: str) -> Optional[int]: ...
    def remove(self, var: str, version: int) -> None: ...
    def undefine(self, var: str) -> int: ...
    def list(self) -> list[VariableInfo]: ...
    def stat(self) -> ServerStats: ...
    def stat_each(self) -> list[Tuple[str, ServerStats]]: ...
    def stop_server(self) -> None: ...

class Server:
    """A staging server in this process (default transport inproc: this process's clients only; 'local', 'tcp' or 'ucx'
    serve other processes, through the connection file it writes)."""
    address: str
    secret: str
    def __init__(self, *, transport: Optional[str] = None, memory_budget: int = 0, max_versions: int = 0,
                 workers: int = 2, reorg: Optional[str] = None, layouts: Optional[Sequence[str]] = None,
                 connection_file: Optional[Union[str, "os.PathLike[str]"]] = None) -> None: ...
    def write_connection_file(self, path: Union[str, "os.PathLike[str]"]) -> None: ...
    def stats(self) -> ServerStats: ...
    def stop(self) -> None: ...
    def wait(self) -> None: ...
    def __enter__(self) -> "Server": ...
    def __exit__(self, *args: Any) -> None: ...

__version__: str

def device_memory_available() -> bool:
    """Whether this process can hand Cove device (GPU) arrays (Cove built with CUDA, plugin loaded, a GPU visible)."""

def connect(target: Optional[str] = None, comm: Any = None, timeout: Optional[float] = 10.0,
            secret: Optional[str] = None) -> Client:
    """Connects to a server group: a connection file, addresses, or COVE_CONNECT. comm: an mpi4py communicator
    for a collective connect (rank 0 reads the target; every rank gets the same outcome)."""
