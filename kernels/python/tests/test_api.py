"""The tiletune package's API and argument checking on a machine with or without a GPU:
every bad array, shape, dtype, stride and argument is an exception carrying tiletune's
message, and with no CUDA driver a valid call is NoGpuError. Arrays are a small fake
exposing __cuda_array_interface__ (no PyTorch, CuPy or GPU needed)."""
import os

# No driver, on every machine: the valid calls below must reach the no-GPU error.
os.environ["TILETUNE_CUDA_DRIVER_LIBRARY"] = "libtiletune-test-no-such-driver.so"

import pytest  # noqa: E402

import tiletune  # noqa: E402


class FakeArray:
    """A CUDA array as __cuda_array_interface__ describes one; never dereferenced."""

    def __init__(self, shape, typestr="<f2", strides=None, ptr=0x7F0000000000):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
            "strides": strides, "version": 3,
        }


def test_version():
    assert tiletune.version().startswith("tiletune ")


def test_copy_checks_shapes_dtypes_and_strides():
    with pytest.raises(tiletune.InvalidArgumentError, match=r"dst has shape \(4, 8\) and src \(4, 9\)"):
        tiletune.copy_(FakeArray((4, 8)), FakeArray((4, 9)))
    with pytest.raises(ValueError, match="dst is f32 and src f16"):
        tiletune.copy_(FakeArray((4, 8), "<f4"), FakeArray((4, 8)))
    with pytest.raises(tiletune.InvalidArgumentError, match=r"typestr '<c8'"):
        tiletune.copy_(FakeArray((4, 8), "<c8"), FakeArray((4, 8), "<c8"))
    # Every other element of a row: not a region of a row-major buffer.
    with pytest.raises(tiletune.InvalidArgumentError, match="last dimension must be contiguous"):
        tiletune.copy_(FakeArray((4, 8)), FakeArray((4, 8), strides=(32, 4)))
    with pytest.raises(tiletune.InvalidArgumentError, match="not multiples of its 2-byte elements"):
        tiletune.copy_(FakeArray((4, 8)), FakeArray((4, 8), strides=(17, 2)))
    with pytest.raises(tiletune.InvalidArgumentError, match="not a region of a row-major buffer"):
        tiletune.copy_(FakeArray((4, 8)), FakeArray((4, 8), strides=(8, 2)))
    with pytest.raises(tiletune.InvalidArgumentError, match="at most 5"):
        shape = (2, 2, 2, 2, 2, 2)
        tiletune.copy_(FakeArray(shape), FakeArray(shape))
    with pytest.raises(tiletune.InvalidArgumentError, match="not a multiple of 16 bytes"):
        tiletune.copy_(FakeArray((4, 8)), FakeArray((4, 8), ptr=0x7F0000000002))
    with pytest.raises(tiletune.InvalidArgumentError, match="tiletune takes a CUDA array"):
        tiletune.copy_(FakeArray((4, 8)), [[1, 2]])


def test_im2col_and_col2im_check_their_arguments():
    with pytest.raises(tiletune.InvalidArgumentError, match=r"im2col takes an NHWC image"):
        tiletune.im2col(FakeArray((8, 8, 3)), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match="needs it contiguous"):
        tiletune.im2col(FakeArray((1, 8, 8, 4), strides=(1024, 128, 16, 2)), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match=r"kernel_size=\(1, 2, 3\)"):
        tiletune.im2col(FakeArray((1, 8, 8, 4)), (1, 2, 3), out=FakeArray((36, 36)))
    with pytest.raises(tiletune.InvalidArgumentError, match="pass out="):
        tiletune.im2col(FakeArray((1, 8, 8, 4)), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match=r"im2col of x needs f16 \(36, 36\)"):
        tiletune.im2col(FakeArray((1, 8, 8, 4)), 3, out=FakeArray((36, 35)))
    with pytest.raises(tiletune.InvalidArgumentError, match=r"col2im takes \[N\*OH\*OW, KH\*KW\*C\]"):
        tiletune.col2im(FakeArray((36,)), (8, 8), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match=r"not \[N\*OH\*OW, KH\*KW\*C\] for a 8x8"):
        tiletune.col2im(FakeArray((35, 36)), (8, 8), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match=r"accepted are 'copy', 'im2col'"):
        tiletune.explain("transpose", FakeArray((1,)))


def test_nchw_layout_checks_its_shapes():
    with pytest.raises(tiletune.InvalidArgumentError, match=r"layout='NCHW': accepted are 'nhwc'"):
        tiletune.im2col(FakeArray((1, 4, 8, 8)), 3, layout="NCHW")
    with pytest.raises(tiletune.InvalidArgumentError, match=r"im2col takes an NCHW image"):
        tiletune.im2col(FakeArray((4, 8, 8)), 3, layout="nchw")
    # [N, C, H, W] = [1, 4, 8, 8]: F.unfold's [1, 36, 36].
    with pytest.raises(tiletune.InvalidArgumentError, match=r"im2col of x needs f16 \(1, 36, 36\)"):
        tiletune.im2col(FakeArray((1, 4, 8, 8)), 3, layout="nchw", out=FakeArray((36, 36)))
    with pytest.raises(tiletune.InvalidArgumentError, match=r"col2im takes \[N, C\*KH\*KW, OH\*OW\] \(layout nchw\)"):
        tiletune.col2im(FakeArray((36, 36)), (8, 8), 3, layout="nchw")
    with pytest.raises(tiletune.InvalidArgumentError, match=r"not \[N, C\*KH\*KW, OH\*OW\] for a 8x8"):
        tiletune.col2im(FakeArray((1, 36, 35)), (8, 8), 3, layout="nchw")
    with pytest.raises(tiletune.NoGpuError):
        tiletune.im2col(FakeArray((1, 4, 8, 8)), 3, padding=1, layout="nchw",
                        out=FakeArray((1, 36, 64)))
    with pytest.raises(tiletune.NoGpuError):
        tiletune.col2im(FakeArray((1, 36, 64)), (8, 8), 3, padding=1, layout="nchw",
                        out=FakeArray((1, 4, 8, 8)))


def test_bad_geometry_is_named():
    with pytest.raises(tiletune.InvalidArgumentError, match=r"stride=0: each must be >= 1"):
        tiletune.im2col(FakeArray((1, 8, 8, 4)), 3, stride=0, out=FakeArray((1, 36)))
    with pytest.raises(tiletune.InvalidArgumentError, match=r"padding=\(-1, 0\): each must be >= 0"):
        tiletune.col2im(FakeArray((36, 36)), (8, 8), 3, padding=(-1, 0))
    # A window larger than the padded image: checked by the C library, before any GPU.
    with pytest.raises(tiletune.InvalidArgumentError, match="kernel|window|larger"):
        tiletune.im2col(FakeArray((1, 2, 2, 4)), 5, out=FakeArray((0, 100)))


def test_valid_calls_without_a_gpu_raise_no_gpu_error():
    with pytest.raises(tiletune.NoGpuError, match="no CUDA driver") as error:
        tiletune.im2col(FakeArray((1, 8, 8, 4)), 3, padding=1, out=FakeArray((64, 36)))
    assert error.value.code == 2
    with pytest.raises(tiletune.NoGpuError):
        tiletune.copy_(FakeArray((16, 64)), FakeArray((16, 64), strides=(256, 2)))
    with pytest.raises(tiletune.NoGpuError):
        tiletune.col2im(FakeArray((64, 36)), (8, 8), 3, padding=1, out=FakeArray((1, 8, 8, 4)))


def test_batch_copy_checks_its_arguments():
    pool = FakeArray((64, 16, 8, 128))
    table = FakeArray((10, 2), "<i8")
    with pytest.raises(tiletune.InvalidArgumentError, match=r"table has shape \(10, 3\); blocks take \[N, 2\] int64"):
        tiletune.batch_copy(pool, pool, FakeArray((10, 3), "<i8"))
    with pytest.raises(tiletune.InvalidArgumentError, match="table is f16; an item table holds int64"):
        tiletune.batch_copy(pool, pool, FakeArray((10, 2)))
    with pytest.raises(tiletune.InvalidArgumentError, match="dst is i64; accepted are"):
        tiletune.batch_copy(FakeArray((64, 8), "<i8"), FakeArray((64, 8), "<i8"), table)
    with pytest.raises(tiletune.InvalidArgumentError, match="not pools of blocks of one shape"):
        tiletune.batch_copy(FakeArray((64, 16, 8, 64)), pool, table)
    with pytest.raises(tiletune.InvalidArgumentError, match="regions=True needs item="):
        tiletune.batch_copy(pool, pool, FakeArray((10, 3), "<i8"), regions=True)
    with pytest.raises(tiletune.InvalidArgumentError, match="not a multiple of item=1000"):
        tiletune.batch_copy(FakeArray((4096,)), FakeArray((4096,)), FakeArray((10, 3), "<i8"),
                            regions=True, item=1000)
    with pytest.raises(tiletune.NoGpuError):
        tiletune.batch_copy(pool, pool, table)
    with pytest.raises(tiletune.NoGpuError):
        tiletune.batch_copy(FakeArray((4096,)), FakeArray((8192,)), FakeArray((10, 3), "<i8"),
                            regions=True, item=1024)


class FakeDLPack:
    """A producer of DLPack capsules (a DLManagedTensor with no deleter), never read."""

    def __init__(self, shape, device_type=2, code=2, bits=16, strides=None, ptr=0x7F0000000000):
        import ctypes

        class DLTensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int),
                        ("device_id", ctypes.c_int), ("ndim", ctypes.c_int),
                        ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                        ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)),
                        ("byte_offset", ctypes.c_uint64), ("manager_ctx", ctypes.c_void_p),
                        ("deleter", ctypes.c_void_p)]

        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self._tensor = DLTensor(ptr, device_type, 0, len(shape), code, bits, 1,
                                ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
                                if self._strides else None, 0, None, None)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._new, self._address = new, ctypes.addressof(self._tensor)

    def __dlpack__(self, stream=None):
        return self._new(self._address, b"dltensor", None)


def test_dlpack_arrays_are_read_and_checked():
    with pytest.raises(tiletune.InvalidArgumentError, match=r"DLPack device type 1 memory \(1 is the CPU\)"):
        tiletune.copy_(FakeDLPack((4, 8)), FakeDLPack((4, 8), device_type=1))
    with pytest.raises(tiletune.InvalidArgumentError, match="DLPack dtype code 5, 64 bits"):
        tiletune.copy_(FakeDLPack((4, 8)), FakeDLPack((4, 8), code=5, bits=64))
    with pytest.raises(tiletune.InvalidArgumentError, match=r"dst has shape \(4, 8\) and src \(4, 9\)"):
        tiletune.copy_(FakeDLPack((4, 8)), FakeDLPack((4, 9)))
    # A valid bf16 slice (rows of 8 at a pitch of 16): reaches the GPU check.
    with pytest.raises(tiletune.NoGpuError):
        tiletune.copy_(FakeDLPack((4, 8), code=4), FakeDLPack((4, 8), code=4, strides=(16, 1)))


def test_read_only_outputs_are_refused():
    out = FakeArray((64, 36))
    out.__cuda_array_interface__["data"] = (0x7F0000000000, True)
    with pytest.raises(tiletune.InvalidArgumentError, match="out is read-only"):
        tiletune.im2col(FakeArray((1, 8, 8, 4)), 3, padding=1, out=out)


def test_explain_takes_the_operators_arguments():
    with pytest.raises(tiletune.NoGpuError):
        tiletune.explain("im2col", FakeArray((1, 8, 8, 4)), 3, 1, 1, 1)
    with pytest.raises(tiletune.NoGpuError):
        tiletune.explain("col2im", FakeArray((64, 36)), (8, 8), 3, padding=1)
    with pytest.raises(tiletune.NoGpuError):
        tiletune.explain("copy", FakeArray((16, 64)), FakeArray((16, 64)))
