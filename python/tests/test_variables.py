"""Variables as objects (docs/python.md, "Variables"): shape, dtype and
versions, reads and writes by h5py-style slicing, checked against numpy's
own slicing of the same array."""
import numpy as np
import pytest

import cove


@pytest.fixture
def grid(client):
    a = np.arange(10 * 12, dtype=np.float32).reshape(10, 12)
    client.define("grid", np.float32, shape=(10, 12))
    client.put("grid", 1, (0, 0), a)
    return a


def test_a_variable_knows_its_definition_and_versions(client, grid):
    v = client.variable("grid")
    assert (v.name, v.shape, v.dtype, v.ndim) == ("grid", (10, 12), np.dtype("float32"), 2)
    assert v.versions == [1]
    v.put(4, grid * 2)
    assert v.versions == [1, 4] and v.latest == 4
    assert repr(v) == "<cove.Variable 'grid' float32 shape (10, 12)>"
    assert repr(v[4]) == "<cove.VersionView 'grid' version 4>"
    np.testing.assert_array_equal(np.asarray(v[4]), grid * 2)
    np.testing.assert_array_equal(v.get(1, (2, 3), (1, 2)), grid[2:3, 3:5])
    walk = v.steps(timeout=0)
    assert [next(walk).version, next(walk).version] == [1, 4]


@pytest.mark.parametrize("key", [
    np.s_[:], np.s_[3], np.s_[-1], np.s_[2:5], np.s_[2:5, 7], np.s_[..., 3], np.s_[1:9:3, ::5], np.s_[-4:, -3:-1],
    np.s_[5:5], np.s_[..., 2:4], np.s_[0, 0], np.s_[::2, 1:2],
])
def test_slicing_reads_what_numpy_reads(client, grid, key):
    got = client.variable("grid")[1][key]
    want = grid[key]
    assert got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_slicing_writes(client, grid):
    v = client.variable("grid")
    v[2][:, :] = grid
    v[2][3:5, 0:4] = np.full((2, 4), -1, np.float32)
    v[2][9] = np.zeros(12, np.float32)
    v[2][0, 0] = 7
    want = grid.copy()
    want[3:5, 0:4] = -1
    want[9] = 0
    want[0, 0] = 7
    np.testing.assert_array_equal(v[2][...], want)


def test_bad_indexes_raise_cove_errors(client, grid):
    v = client.variable("grid")
    with pytest.raises(cove.OutOfRange, match="index 10 is out of range for axis 0"):
        v[1][10]
    with pytest.raises(cove.InvalidArgument, match="has 2 dimensions"):
        v[1][1, 2, 3]
    with pytest.raises(cove.InvalidArgument, match="not an int or a slice"):
        v[1]["a"]
    with pytest.raises(cove.InvalidArgument, match="positive steps"):
        v[1][::-1]
    with pytest.raises(cove.InvalidArgument, match="a version"):
        v[-1]
    with pytest.raises(cove.InvalidArgument, match="step 1"):
        v[1][::2] = 0
    with pytest.raises(cove.NotFound):
        client.variable("grid", timeout=0)[7][0:2]  # never written; reads keep the variable's timeout
    with pytest.raises(cove.Timeout):
        client.variable("grid", timeout=0.1)[7][0:2]
    with pytest.raises(cove.NotFound):
        client.variable("nothing", timeout=0)
    client.define("open", np.float64, ndim=1)
    with pytest.raises(cove.InvalidArgument, match="without a shape"):
        client.variable("open")[1][0:2]
