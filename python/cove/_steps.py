"""Steps: a reader walks the complete versions of a stream, as ADIOS2
readers do (docs/python.md, "Steps")::

    for step in c.steps("heat/T", timeout=60):
        t = step.get()                 # the step's region of heat/T
        ...
    # the loop ends when the writer calls c.end_steps("heat/T")

A step is a version that covers the walk's region of every variable named.
Steps come in increasing version order; ``every=n`` takes the oldest step at
or after the last one plus n, ``newest=True`` skips to the newest complete
step each time (a reader that cannot keep up). The walk starts at the oldest
version the servers keep (``after=v``: after v) and waits for variables not
defined yet. ``timeout`` (seconds; None: as long as it takes) applies to each
step: Timeout when none comes in time.
"""
from ._errors import InvalidArgument


class Step:
    """One step of a walk: its ``version`` and the variables it covers."""

    __slots__ = ("_client", "version", "vars", "_regions")

    def __init__(self, client, version, vars, regions):
        self._client = client
        self.version = version
        self.vars = vars
        self._regions = regions

    def __repr__(self):
        return f"<cove.Step {self.version} of {', '.join(repr(v) for v in self.vars)}>"

    def get(self, var=None, start=None, count=None, **kwargs):
        """The step's data of `var` (default: the walk's only variable), in the walk's region or (start, count);
        keywords as Client.get (dtype, out, order). NotFound if the version went meanwhile."""
        if var is None:
            if len(self.vars) != 1:
                raise InvalidArgument(f"Step.get(): name the variable, one of {list(self.vars)}")
            var = self.vars[0]
        if (start is None) != (count is None):
            raise InvalidArgument("Step.get(): give both start and count, or neither")
        if start is None:
            start, count = self._region(var)
        return self._client.get(var, self.version, start, count, timeout=0, **kwargs)

    def _region(self, var):
        region = self._regions.get(var)
        if region is not None:
            return region
        if var not in self.vars:
            raise InvalidArgument(f"Step.get(): '{var}' is not one of the walk's variables {list(self.vars)}")
        _, ndim, shape = self._client.definition(var)
        if shape is None:
            raise InvalidArgument(f"Step.get(): variable '{var}' has no declared shape; give start and count")
        return (0,) * ndim, shape


def steps(client, vars, start=None, count=None, *, regions=None, every=1, newest=False, after=None, timeout=None):
    """Yields a :class:`Step` for each complete step of `vars` (a name or a list of names).

    start, count: one region for every variable; regions: {var: (start, count)} for each; neither: each variable's
    whole declared shape. every: after step v the next is the oldest at or after v + every. newest: skip to the
    newest complete step each time. after: start after this version. timeout: seconds per step (None: forever),
    then Timeout; 0 raises NotFound when no step is complete now. Ends when a writer calls end_steps().
    """
    names = [vars] if isinstance(vars, str) else list(vars)
    if not names or not all(isinstance(n, str) for n in names):
        raise InvalidArgument(f"steps(): vars must be a name or a list of names, not {vars!r}")
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise InvalidArgument(f"steps(): every = {every!r} must be an int of 1 or more")
    if (start is None) != (count is None):
        raise InvalidArgument("steps(): give both start and count, or neither")
    if regions is not None and start is not None:
        raise InvalidArgument("steps(): give start and count, or regions, not both")
    if regions is not None:
        if not isinstance(regions, dict) or set(regions) != set(names):
            raise InvalidArgument(f"steps(): regions must map each of {names} to (start, count), not {regions!r}")
        by_var = {n: tuple(regions[n]) for n in names}
    elif start is not None:
        by_var = {n: (start, count) for n in names}
    else:
        by_var = {}
    walk = client._steps(names, [by_var[n] for n in names] if by_var else None, every, bool(newest), after)
    return _iterate(client, walk, names, by_var, timeout)


def _iterate(client, walk, names, by_var, timeout):
    while True:
        version = walk.next(timeout)
        if version is None:
            return
        yield Step(client, version, tuple(names), by_var)
