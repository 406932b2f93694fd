"""Wire conversions without a daemon: IngestRequest encoding, sample checks, Array dtypes."""

import numpy as np
import pytest

from histd import _arrays
from histd.v1 import common_pb2, ingest_pb2


@pytest.mark.parametrize("sequence", [1, 127, 128, 300, 2**32, 2**63 + 5])
@pytest.mark.parametrize("payload", [b"", b"\x01\x02\x03\x04", bytes(range(256)) * 600])
def test_encoding_matches_protobuf(sequence, payload):
    name = "wafer-1.a_b"
    want = ingest_pb2.IngestRequest(sequence=sequence, histogram=name,
                                    type=ingest_pb2.SAMPLE_TYPE_XY_F32,
                                    samples=payload).SerializeToString()
    got = _arrays.encode_ingest_request(sequence, name.encode(), ingest_pb2.SAMPLE_TYPE_XY_F32,
                                        memoryview(payload))
    assert got == want
    assert ingest_pb2.IngestRequest.FromString(got).samples == payload


@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f4", "f8",
                                   ">u4", ">i8"])
def test_indices_of_every_dtype_pack_to_u32(dtype):
    values = np.array([0, 1, 7, 100, 127], dtype=dtype)
    a = _arrays.check_indices(values, limit=128)
    packed = b"".join(bytes(p) for p in _arrays.index_chunks(a, chunk=2))
    assert np.array_equal(np.frombuffer(packed, "<u4"), values.astype(np.int64))


def test_u32_input_is_not_copied():
    a = np.arange(10, dtype="<u4")
    (piece,) = list(_arrays.index_chunks(_arrays.check_indices(a, None), chunk=4))
    assert piece.obj is a or np.shares_memory(np.asarray(piece.obj), a)


@pytest.mark.parametrize("values, limit, position", [
    ([0, 5, -1], None, 2),
    ([3, 2**32], None, 1),
    ([0, 10], 10, 1),
    ([0.0, 1.5], None, 1),
    ([0.0, np.nan], None, 1),
    ([np.inf], None, 0),
])
def test_bad_indices_name_the_position(values, limit, position):
    with pytest.raises(ValueError, match=rf"indices\[{position}\]"):
        _arrays.check_indices(np.array(values), limit)


def test_indices_reject_non_numeric():
    with pytest.raises(TypeError):
        _arrays.check_indices(np.array([True, False]), None)
    with pytest.raises(TypeError):
        _arrays.check_indices(np.array(["1"]), None)


def test_xy_pairs_interleave_as_float32():
    xs = np.array([0.1, 1e300, -np.inf, np.nan])
    ys = np.array([1, 2, 3, 4], dtype=np.int64)
    xs_, ys_ = _arrays.check_xy(xs, ys)
    packed = b"".join(bytes(p) for p in _arrays.xy_chunks(xs_, ys_, chunk=3))
    pairs = np.frombuffer(packed, "<f4").reshape(-1, 2)
    assert pairs[0, 0] == np.float32(0.1) and pairs[1, 0] == np.inf
    assert pairs[2, 0] == -np.inf and np.isnan(pairs[3, 0])
    assert np.array_equal(pairs[:, 1], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="differ in length"):
        _arrays.check_xy([1, 2], [1])


@pytest.mark.parametrize("dtype, wire", [
    ("bool", common_pb2.DTYPE_U8), ("u1", common_pb2.DTYPE_U8), ("u2", common_pb2.DTYPE_U32),
    ("u4", common_pb2.DTYPE_U32), ("u8", common_pb2.DTYPE_U64), ("i1", common_pb2.DTYPE_I32),
    ("i2", common_pb2.DTYPE_I32), ("i4", common_pb2.DTYPE_I32), ("i8", common_pb2.DTYPE_I64),
    ("f2", common_pb2.DTYPE_F32), ("f4", common_pb2.DTYPE_F32), ("f8", common_pb2.DTYPE_F64),
    (">f8", common_pb2.DTYPE_F64),
])
def test_compute_arrays_round_trip(dtype, wire):
    a = (np.arange(6) % 2 == 1) if dtype == "bool" else np.arange(6).astype(dtype)
    a = a.reshape(2, 3)
    proto = _arrays.to_proto_array(a)
    assert (proto.dtype, proto.rows, proto.cols) == (wire, 2, 3)
    back = _arrays.from_proto_array(proto)
    assert np.array_equal(back, a.astype(back.dtype)) and back.dtype.isnative


def test_compute_arrays_shapes_and_refusals():
    assert (_arrays.to_proto_array(np.arange(4)).rows, _arrays.to_proto_array(np.arange(4)).cols) == (1, 4)
    assert _arrays.to_proto_array(np.float64(2.5)).cols == 1
    with pytest.raises(ValueError, match="at most 2-D"):
        _arrays.to_proto_array(np.zeros((2, 2, 2)))
    with pytest.raises(TypeError):
        _arrays.to_proto_array(np.zeros(2, dtype=complex))
    bad = common_pb2.Array(dtype=common_pb2.DTYPE_U32, rows=2, cols=2, data=b"\0" * 15)
    with pytest.raises(ValueError):
        _arrays.from_proto_array(bad)
