"""Cove's exceptions: one class per row of the status table
(include/cove/status_table.h), all under :class:`cove.Error`.

Each also derives from the built-in exception a Python programmer would
catch for it (``cove.Timeout`` is a ``TimeoutError``, ``cove.InvalidArgument``
a ``ValueError``, ...). ``error.code`` is the status value, ``error.status``
its name.
"""


class Error(Exception):
    """A Cove call failed; ``code`` and ``status`` say how."""

    code = -1
    status = "Unknown"


def _make(name, code, *bases, doc):
    return type(name, (Error, *bases), {"code": code, "status": name, "__doc__": doc, "__module__": "cove"})


InvalidArgument = _make("InvalidArgument", 1, ValueError, doc="A bad argument, or one that does not match the variable.")
OutOfRange = _make("OutOfRange", 2, ValueError, doc="A value out of range.")
Overflow = _make("Overflow", 3, OverflowError, doc="Arithmetic overflow (a region too large).")
NotFound = _make("NotFound", 4, LookupError, doc="An unknown variable, version or name.")
AlreadyExists = _make("AlreadyExists", 5, doc="Something that exists already.")
Timeout = _make("Timeout", 6, TimeoutError, doc="The timeout passed first.")
NoMemory = _make("NoMemory", 7, MemoryError, doc="Out of memory, or over the server's memory budget.")
Unavailable = _make("Unavailable", 8, ConnectionError, doc="No server answers.")
Protocol = _make("Protocol", 9, doc="A malformed or incompatible message.")
Unsupported = _make("Unsupported", 10, doc="An operation not supported here.")
Cancelled = _make("Cancelled", 11, doc="Cancelled.")
Internal = _make("Internal", 12, doc="An internal error.")
PermissionDenied = _make("PermissionDenied", 13, PermissionError, doc="Not allowed (the group's secret is missing or wrong).")
Error.__module__ = "cove"

_BY_CODE = {cls.code: cls for cls in (InvalidArgument, OutOfRange, Overflow, NotFound, AlreadyExists, Timeout,
                                      NoMemory, Unavailable, Protocol, Unsupported, Cancelled, Internal,
                                      PermissionDenied)}


def error_class(code):
    """The class raised for a status value (``Error`` for one this version does not know)."""
    return _BY_CODE.get(code, Error)
