"""Cove: in-memory data staging for coupled HPC workflows, from Python.

Programs exchange N-dimensional arrays through a versioned space held by
staging servers::

    import cove, numpy as np
    with cove.Server() as server, cove.connect(server.address) as c:
        c.define("t", np.float64, shape=(4, 6))
        c.put("t", 1, (0, 0), np.arange(24.0).reshape(4, 6))
        a = c.get("t", 1, (1, 2), (2, 3))

Regions are ``start`` + ``count`` per dimension in the variable's global
index space, in C order (the last index varies fastest); arrays may be in C
or Fortran order (or any axis order) on either side. Timeouts are in
seconds; ``None`` waits as long as it takes. Every blocking call releases
the GIL. Errors raise :class:`cove.Error` subclasses (see ``cove._errors``).
The user guide is docs/python.md.
"""
import atexit as _atexit
import functools as _functools
import os as _os
from collections import namedtuple as _namedtuple

from ._errors import (AlreadyExists, Cancelled, Error, Internal, InvalidArgument, NoMemory, NotFound, OutOfRange,
                      Overflow, PermissionDenied, Protocol, Timeout, Unavailable, Unsupported)
from ._cove import (Client, PieceInfo, PutHandle, ReplicaInfo, Server, ServerStats, Subscription, VariableInfo,
                    VersionInfo)
from . import _cove
from . import _log
from ._steps import Step, steps as _steps
from ._variables import Variable, VersionView, variable as _variable

__version__ = _cove.__version__
device_memory_available = _cove.device_memory_available

__all__ = [
    "connect", "device_memory_available", "Client", "Server", "Step", "Variable", "VersionView", "Metadata", "WorkerSlot", "PutHandle", "Subscription", "VariableInfo", "VersionInfo",
    "PieceInfo", "ReplicaInfo", "ServerStats", "Error", "InvalidArgument", "OutOfRange", "Overflow", "NotFound",
    "AlreadyExists", "Timeout", "NoMemory", "Unavailable", "Protocol", "Unsupported", "Cancelled", "Internal",
    "PermissionDenied",
]

Metadata = _namedtuple("Metadata", ["version", "data"])
Metadata.__doc__ = "A metadata blob (bytes) and its version."
WorkerSlot = _namedtuple("WorkerSlot", ["slot", "slots", "workers"])
WorkerSlot.__doc__ = "A worker slot taken by Client.become_worker: the slot, the server's slots, the workers there now."


def connect(target=None, comm=None, timeout=10.0, secret=None):
    """Connects to a Cove server group and returns a :class:`Client`.

    target: a connection file written by cove-server, server addresses
    separated by commas, or None for the COVE_CONNECT environment variable.
    comm: an mpi4py communicator: a collective connect, where rank 0 reads
    the target and passes the addresses and the group's secret to the
    others (within ``comm`` only); every rank gets the same outcome.
    timeout: seconds to wait for the connection file and the servers.
    secret: the group's secret, when the target gives addresses (else the
    connection file's, COVE_SECRET, or that of a server in this process).
    Raises Unavailable, PermissionDenied or InvalidArgument.
    """
    if target is not None and not isinstance(target, (str, _os.PathLike)):
        raise InvalidArgument(f"connect(): target = {target!r} ({type(target).__name__}) is not a connection file, "
                              "addresses or None")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        raise InvalidArgument(f"connect(): timeout = {timeout!r} ({type(timeout).__name__}) is not seconds or None")
    if secret is not None and not isinstance(secret, str):
        raise InvalidArgument(f"connect(): secret = {secret!r} ({type(secret).__name__}) is not a str or None")
    target = _os.fspath(target) if target is not None else ""
    secret = secret or ""
    if comm is None:
        return Client._connect(target, timeout, secret, False)
    outcome = None
    if comm.Get_rank() == 0:
        try:
            servers, file_secret, from_file = _cove._resolve_target(target, timeout)
            outcome = (None, ",".join(servers), secret or file_secret, from_file)
        except Error as e:
            outcome = (type(e), str(e), "", False)
    error, text, group_secret, from_file = comm.bcast(outcome, root=0)
    if error is not None:
        raise error(text)
    return Client._connect(text, timeout, group_secret, from_file)


def _get_meta(self, name, version, timeout=None):
    """The metadata blob `name` of `version`, waiting up to `timeout` seconds (0: at once). NotFound, Timeout."""
    return Metadata(*self._get_meta(name, 0, version, timeout))


def _get_meta_next(self, name, after, timeout=None):
    """The first metadata version after `after`."""
    return Metadata(*self._get_meta(name, 1, after, timeout))


def _get_meta_latest(self, name, timeout=None):
    """The newest metadata version."""
    return Metadata(*self._get_meta(name, 2, 0, timeout))


def _become_worker(self, server, name):
    """Makes this client a consumer worker of server `server` (an index into `servers`): its connection takes
    one of that server's worker slots until the client closes or the process ends. Returns a WorkerSlot.
    OutOfRange for an index outside the group, InvalidArgument for an empty name, Unavailable when every slot
    is taken (naming the slots), AlreadyExists when this client already is a worker of that server."""
    return WorkerSlot(*self._become_worker(server, name))


Client.get_meta = _get_meta
Client.steps = _steps
Client.variable = _variable
Client.become_worker = _become_worker
Client.get_meta_next = _get_meta_next
Client.get_meta_latest = _get_meta_latest

def _argument_errors(cls):
    """Wraps the public methods (and the constructor) of a binding class so that arguments nanobind cannot convert
    raise cove.InvalidArgument naming the call, what it was given and what it takes, instead of nanobind's TypeError."""
    for name, f in list(vars(cls).items()):
        if (name.startswith("_") and name != "__init__") or type(f).__name__ != "nb_method":
            continue

        def wrapper(*args, __f=f, __name=name, **kwargs):
            try:
                return __f(*args, **kwargs)
            except TypeError as e:
                if "incompatible function arguments" not in str(e):
                    raise
                given = [f"{a!r} ({type(a).__name__})" for a in args[1:]]
                given += [f"{k}={v!r} ({type(v).__name__})" for k, v in kwargs.items()]
                expected = (__f.__doc__ or "").split("\n", 1)[0]
                raise InvalidArgument(f"{cls.__name__}.{__name}() cannot take the arguments {', '.join(given) or '()'}; "
                                      f"it is {expected}") from None

        _functools.update_wrapper(wrapper, f)
        setattr(cls, name, wrapper)


for _cls in (Client, Server, PutHandle, Subscription):
    _argument_errors(_cls)

_log.start()

# Subscription threads call into Python: stop them while the interpreter can
# still run their callbacks to the end.
_atexit.register(_cove._cancel_all_subscriptions)
