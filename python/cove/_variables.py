"""Variables as objects, sliced as in h5py (docs/python.md, "Variables")::

    v = c.variable("heat/T")           # waits for the definition within timeout
    v.shape, v.dtype, v.versions       # (64, 64), float64, [1, 2, 3]
    block = v[2][10:20, :]             # a numpy array: rows 10..19 of version 2
    v[3][0:4, 0:4] = np.ones((4, 4))   # a put
    v.put(3, array, start=(4, 0))

Indexing takes ints (the axis is dropped), slices (a step other than 1
reads the bounding region, then slices it), ``...`` and negative indices,
against the declared shape. Every read has the variable's timeout rule:
``timeout`` of variable() applies to each read (None: as long as it takes).
"""
import numbers as _numbers

from ._errors import InvalidArgument, OutOfRange


class Variable:
    """A variable of the space, bound to a client. Cheap: it holds the name and definition only."""

    def __init__(self, client, name, dtype, ndim, shape, timeout):
        self._client = client
        self.name = name
        self.dtype = dtype
        self.ndim = ndim
        self.shape = shape
        self.timeout = timeout

    def __repr__(self):
        shape = "no declared shape" if self.shape is None else f"shape {self.shape}"
        return f"<cove.Variable '{self.name}' {self.dtype} {shape}>"

    @property
    def versions(self):
        """The versions the servers hold now, oldest first."""
        for info in self._client.list():
            if info.name == self.name:
                return sorted({v.version for v in info.versions})
        return []

    @property
    def latest(self):
        """The newest version held now, or None."""
        return self._client.latest(self.name)

    def __getitem__(self, version):
        return VersionView(self, version)

    def put(self, version, array, start=None):
        """Stores `array` in `version` at `start` (default: the origin)."""
        self._client.put(self.name, version, (0,) * self.ndim if start is None else start, array)

    def get(self, version, start=None, count=None, **kwargs):
        """Client.get() of this variable (start and count default to the whole shape)."""
        if (start is None) != (count is None):
            raise InvalidArgument(f"variable '{self.name}': give both start and count, or neither")
        if start is None:
            start, count = (0,) * self.ndim, self._whole("get()")
        kwargs.setdefault("timeout", self.timeout)
        return self._client.get(self.name, version, start, count, **kwargs)

    def steps(self, start=None, count=None, **kwargs):
        """Client.steps() over this variable alone."""
        return self._client.steps(self.name, start, count, **kwargs)

    def _whole(self, what):
        if self.shape is None:
            raise InvalidArgument(f"variable '{self.name}' was defined without a shape: {what} needs start and count")
        return self.shape


class VersionView:
    """One version of a variable: index it to read, assign to an index to write."""

    def __init__(self, variable, version):
        if isinstance(version, bool) or not isinstance(version, _numbers.Integral) or version < 0:
            raise InvalidArgument(f"variable '{variable.name}': index it by a version (an int of 0 or more), "
                                  f"not {version!r}")
        self.variable = variable
        self.version = int(version)

    def __repr__(self):
        return f"<cove.VersionView '{self.variable.name}' version {self.version}>"

    @property
    def shape(self):
        return self.variable.shape

    @property
    def dtype(self):
        return self.variable.dtype

    def read(self, **kwargs):
        """The whole version, as Variable.get()."""
        return self.variable.get(self.version, **kwargs)

    def __array__(self, dtype=None, copy=None):
        a = self.read()
        return a if dtype is None else a.astype(dtype)

    def __getitem__(self, key):
        start, count, steps, dropped = self._region(key, "read")
        v = self.variable
        if 0 in count:  # an empty selection: nothing to ask for
            import numpy as np
            return np.empty([(c + s - 1) // s for d, (c, s) in enumerate(zip(count, steps)) if d not in dropped],
                            dtype=v.dtype)
        a = v._client.get(v.name, self.version, start, count, timeout=v.timeout)
        if any(s != 1 for s in steps):
            a = a[tuple(slice(None, None, s) for s in steps)]
        if dropped:
            a = a.reshape([n for d, n in enumerate(a.shape) if d not in dropped])
        return a

    def __setitem__(self, key, array):
        import numpy as np
        start, count, steps, dropped = self._region(key, "write")
        if any(s != 1 for s in steps):
            raise InvalidArgument(f"variable '{self.variable.name}': a write takes slices with step 1, not {key!r}")
        if 0 in count:
            return
        a = np.asarray(array, dtype=self.variable.dtype)
        if a.shape != tuple(count):
            a = np.broadcast_to(a, [c for d, c in enumerate(count) if d not in dropped]).reshape(count)
        self.variable._client.put(self.variable.name, self.version, start, np.ascontiguousarray(a))

    def _region(self, key, what):
        """(start, count, steps, dropped axes) of an index expression against the declared shape."""
        v = self.variable
        shape = v._whole(f"a {what} by slices")
        key = key if isinstance(key, tuple) else (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise InvalidArgument(f"variable '{v.name}': at most one ... in {key!r}")
        if Ellipsis in key:
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (len(shape) - len(key) + 1) + key[at + 1:]
        if len(key) > len(shape):
            raise InvalidArgument(f"variable '{v.name}' has {len(shape)} dimensions; {key!r} indexes {len(key)}")
        key = key + (slice(None),) * (len(shape) - len(key))
        start, count, steps, dropped = [], [], [], set()
        for axis, (k, n) in enumerate(zip(key, shape)):
            if isinstance(k, slice):
                lo, hi, step = k.indices(n)
                if step < 1:
                    raise InvalidArgument(f"variable '{v.name}': axis {axis}: a step of {step} (only positive steps)")
                extent = max(0, (hi - lo + step - 1) // step)
                start.append(lo)
                count.append(0 if extent == 0 else (extent - 1) * step + 1)
                steps.append(step)
            elif isinstance(k, _numbers.Integral) and not isinstance(k, bool):
                i = int(k) + n if k < 0 else int(k)
                if not 0 <= i < n:
                    raise OutOfRange(f"variable '{v.name}': index {k} is out of range for axis {axis} of extent {n}")
                start.append(i)
                count.append(1)
                steps.append(1)
                dropped.add(axis)
            else:
                raise InvalidArgument(f"variable '{v.name}': axis {axis}: {k!r} is not an int or a slice")
        return tuple(start), tuple(count), steps, dropped


def variable(client, name, timeout=None):
    """A :class:`Variable` for `name`, waiting up to `timeout` seconds for its definition (None: forever;
    0: NotFound at once). Reads through it wait as long as `timeout` too."""
    dtype, ndim, shape = client.definition(name, timeout)
    return Variable(client, name, dtype, ndim, shape, timeout)
