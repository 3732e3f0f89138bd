"""tiletune from Python: tuned GPU copies, im2col and col2im on any CUDA array.

    import tiletune
    tiletune.copy_(dst, src)                           # strided views, slices, offsets
    cols = tiletune.im2col(x, 3, padding=1)            # NHWC x -> [N*OH*OW, KH*KW*C]
    img = tiletune.col2im(cols, (H, W), 3, padding=1)  # the adjoint: NHWC image
    tiletune.explain("im2col", x, 3, padding=1)        # what would run, and why

Arrays are PyTorch tensors, or any object with __cuda_array_interface__ (CuPy, Numba) or
__dlpack__ (JAX, ...); tiletune depends on none of them. Work goes on the
producer's current stream (torch.cuda.current_stream() for tensors), or `stream=` (an
int CUstream handle, or an object with .cuda_stream or .ptr). Plans are cached by shape,
dtype, strides, alignment and device, so a repeated call costs one launch. The library
is libtiletune.so (the C API, kernels/tiletune_c.h), carried in this package.
"""

import ctypes
import inspect
import os
import sys
import threading

__all__ = [
    "Error",
    "NoGpuError",
    "copy_",
    "im2col",
    "col2im",
    "batch_copy",
    "explain",
    "version",
    "clear_plan_cache",
]

_MAX_RANK = 5


class Error(RuntimeError):
    """A failure reported by tiletune; `code` is the C API's tt_status."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class InvalidArgumentError(Error, ValueError):
    """A bad array, shape, dtype, stride or argument: the message names it."""


class NoGpuError(Error):
    """No CUDA driver or no usable GPU."""


_CODES = {1: InvalidArgumentError, 2: NoGpuError}

# ---------------------------------------------------------------------------------------
# The C library.


class _Region(ctypes.Structure):
    _fields_ = [
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * _MAX_RANK),
        ("offsets", ctypes.c_int64 * _MAX_RANK),
        ("extents", ctypes.c_int64 * _MAX_RANK),
    ]


class _CopyDesc(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("src", _Region), ("dst", _Region)]


class _ConvDesc(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int)] + [
        (name, ctypes.c_int64)
        for name in ("n", "h", "w", "c", "kh", "kw", "stride_h", "stride_w", "dilation_h",
                     "dilation_w", "pad_h", "pad_w")
    ] + [("layout", ctypes.c_int)]


class _BatchCopyDesc(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("regions", ctypes.c_int32), ("count", ctypes.c_int64),
                ("item", ctypes.c_int64), ("src_items", ctypes.c_int64),
                ("dst_items", ctypes.c_int64)]


_ABI_VERSION = 3
_LAYOUTS = {"nhwc": 0, "nchw": 1}


def _load():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", "libtiletune.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"tiletune: cannot load {path}: {e}") from e
    lib.tt_version.restype = ctypes.c_char_p
    lib.tt_abi_version.restype = ctypes.c_int
    lib.tt_last_error.restype = ctypes.c_char_p
    for name, desc in (("copy", _CopyDesc), ("im2col", _ConvDesc), ("col2im", _ConvDesc),
                       ("batch_copy", _BatchCopyDesc)):
        f = getattr(lib, "tt_plan_create_" + name)
        f.argtypes = [ctypes.POINTER(desc), ctypes.POINTER(ctypes.c_void_p)]
        f.restype = ctypes.c_int
    lib.tt_plan_execute.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                                    ctypes.c_void_p]
    lib.tt_plan_execute.restype = ctypes.c_int
    lib.tt_plan_execute_items.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                                          ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p]
    lib.tt_plan_execute_items.restype = ctypes.c_int
    lib.tt_plan_info.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.tt_plan_info.restype = ctypes.c_char_p
    lib.tt_plan_destroy.argtypes = [ctypes.c_void_p]
    lib.tt_plan_destroy.restype = None
    if lib.tt_abi_version() != _ABI_VERSION:
        raise ImportError(f"tiletune: {path} has C ABI {lib.tt_abi_version()}, this package "
                          f"expects {_ABI_VERSION}; reinstall the wheel")
    return lib


_lib = _load()


def version():
    """The library's version, e.g. 'tiletune 0.3.0'."""
    return _lib.tt_version().decode()


def _check(code):
    if code != 0:
        message = _lib.tt_last_error().decode(errors="replace")
        raise _CODES.get(code, Error)(code, message)


# ---------------------------------------------------------------------------------------
# Arrays: what tiletune needs of one (device address, shape, element strides, dtype).

_DTYPES = {  # name -> (tt_dtype, bytes)
    "f64": (0, 8), "f32": (1, 4), "f16": (2, 2), "bf16": (3, 2), "f8e4m3": (4, 1),
    "i32": (5, 4), "i8": (6, 1), "u8": (7, 1),
    "i64": (None, 8),  # item tables only (batch_copy), never data
}
_TORCH_DTYPES = {
    "torch.float64": "f64", "torch.float32": "f32", "torch.float16": "f16",
    "torch.bfloat16": "bf16", "torch.float8_e4m3fn": "f8e4m3", "torch.int32": "i32",
    "torch.int8": "i8", "torch.uint8": "u8", "torch.int64": "i64",
}
_TYPESTRS = {"<f8": "f64", "<f4": "f32", "<f2": "f16", "<i4": "i32", "|i1": "i8",
             "|u1": "u8", "<i1": "i8", "<u1": "u8", "<i8": "i64"}


class _Array:
    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "torch", "stream", "storage",
                 "readonly", "keep")

    def __repr__(self):
        return f"array({self.dtype}, shape={self.shape}, strides={self.strides})"


def _is_torch(obj):
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_DTYPES = {(2, 64): "f64", (2, 32): "f32", (2, 16): "f16", (4, 16): "bf16",
              (0, 32): "i32", (0, 8): "i8", (1, 8): "u8", (0, 64): "i64"}
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dense_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _from_torch(a, obj, name):
    if obj.device.type != "cuda":
        raise InvalidArgumentError(1, f"{name} is on {obj.device}; tiletune needs a CUDA tensor")
    dtype = _TORCH_DTYPES.get(str(obj.dtype))
    if dtype is None:
        raise InvalidArgumentError(1, f"{name} has dtype {obj.dtype}; accepted are "
                                   + ", ".join(sorted(_TORCH_DTYPES)))
    a.ptr = obj.data_ptr()
    a.shape = tuple(int(d) for d in obj.shape)
    a.strides = tuple(int(s) for s in obj.stride())
    a.dtype = dtype
    a.device = obj.device.index if obj.device.index is not None else 0
    a.torch = True
    # The view's place in its storage: (storage address, element offset).
    itemsize = _DTYPES[dtype][1]
    storage = obj.untyped_storage().data_ptr()
    if (a.ptr - storage) % itemsize == 0:
        a.storage = (storage, (a.ptr - storage) // itemsize)


def _from_cai(a, cai, name):
    typestr = cai.get("typestr", "")
    dtype = _TYPESTRS.get(typestr)
    if dtype is None:
        raise InvalidArgumentError(1, f"{name} has typestr {typestr!r}; accepted are "
                                   + ", ".join(sorted(_TYPESTRS)))
    itemsize = _DTYPES[dtype][1]
    a.ptr = int(cai["data"][0])
    a.readonly = bool(cai["data"][1])
    a.shape = tuple(int(d) for d in cai["shape"])
    byte_strides = cai.get("strides")
    if byte_strides is None:
        a.strides = _dense_strides(a.shape)
    else:
        if any(s % itemsize for s in byte_strides):
            raise InvalidArgumentError(1, f"{name} has byte strides {tuple(byte_strides)}, not "
                                       f"multiples of its {itemsize}-byte elements")
        a.strides = tuple(int(s) // itemsize for s in byte_strides)
    a.dtype = dtype
    a.stream = cai.get("stream")


def _from_dlpack(a, obj, name):
    try:
        capsule = obj.__dlpack__()
    except Exception as e:  # noqa: BLE001 (the producer's own refusal, passed on)
        raise InvalidArgumentError(1, f"{name}.__dlpack__() failed: {e}") from e
    pointer = _capsule_pointer(capsule, b"dltensor")
    # A DLManagedTensor starts with its DLTensor. The capsule is not consumed: the producer
    # keeps the memory, and the capsule's destructor releases it.
    t = _DLTensor.from_address(pointer)
    if t.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise InvalidArgumentError(1, f"{name} is in DLPack device type {t.device.device_type} "
                                   f"memory (1 is the CPU); tiletune needs CUDA memory (2)")
    dtype = _DL_DTYPES.get((t.dtype.code, t.dtype.bits))
    if dtype is None or t.dtype.lanes != 1:
        raise InvalidArgumentError(1, f"{name} has DLPack dtype code {t.dtype.code}, "
                                   f"{t.dtype.bits} bits, {t.dtype.lanes} lanes; accepted are "
                                   + ", ".join(sorted(set(_DL_DTYPES.values()))))
    a.shape = tuple(int(t.shape[d]) for d in range(t.ndim))
    a.strides = (tuple(int(t.strides[d]) for d in range(t.ndim)) if t.strides
                 else _dense_strides(a.shape))
    a.ptr = (t.data or 0) + t.byte_offset
    a.dtype = dtype
    a.device = t.device.device_id
    a.keep = capsule


def _array(obj, name, output=False, table=False):
    """What tiletune needs of a CUDA array: from a PyTorch tensor (read directly), an
    object with __cuda_array_interface__, or one with __dlpack__ (JAX, ...). int64 only for
    an item table (`table`)."""
    a = _Array()
    a.stream, a.storage, a.torch, a.device, a.readonly, a.keep = None, None, False, 0, False, None
    if _is_torch(obj):
        _from_torch(a, obj, name)
    elif getattr(obj, "__cuda_array_interface__", None) is not None:
        _from_cai(a, obj.__cuda_array_interface__, name)
    elif hasattr(obj, "__dlpack__"):
        _from_dlpack(a, obj, name)
    else:
        raise InvalidArgumentError(1, f"{name} is a {type(obj).__name__}: tiletune takes a CUDA "
                                   "array (a PyTorch tensor, or an object with "
                                   "__cuda_array_interface__ or __dlpack__)")
    if output and a.readonly:
        raise InvalidArgumentError(1, f"{name} is read-only; tiletune writes it")
    if (a.dtype == "i64") != table:
        raise InvalidArgumentError(1, f"{name} is {a.dtype}; " + (
            "an item table holds int64 entries" if table else
            "accepted are " + ", ".join(sorted(k for k in _DTYPES if k != "i64"))))
    return a


def _squeezed(shape, *stride_lists):
    """shape and strides without unit dimensions (at least one dimension kept)."""
    keep = [d for d, e in enumerate(shape) if e != 1] or [len(shape) - 1]
    return (tuple(shape[d] for d in keep),) + tuple(tuple(s[d] for d in keep) for s in stride_lists)


def _region(a, shape, strides, name):
    """The dense row-major buffer the view (shape, element strides) of `a` lies in: (base
    address, buffer shape, offsets of the view), or InvalidArgumentError when its strides
    are not those of one. A torch view is placed in its storage; another array's buffer
    starts at its first element."""
    rank = len(shape)
    if rank > _MAX_RANK:
        raise InvalidArgumentError(1, f"{name} has {rank} dimensions of more than one element; "
                                   f"tiletune takes at most {_MAX_RANK}")
    if any(s <= 0 for s in strides) or strides[-1] != 1:
        raise InvalidArgumentError(1, f"{name} has strides {a.strides}: its last dimension must "
                                   "be contiguous (stride 1) and every stride positive")
    buffer = [0] * rank
    for d in range(rank - 1, 0, -1):
        if strides[d - 1] % strides[d] != 0 or strides[d - 1] // strides[d] < shape[d]:
            raise InvalidArgumentError(1, f"{name} has strides {a.strides} for shape {a.shape}: "
                                       "not a region of a row-major buffer (each stride must be "
                                       "a multiple of the next, covering its extent)")
        buffer[d] = strides[d - 1] // strides[d]
    itemsize = _DTYPES[a.dtype][1]
    if a.storage is not None:
        base, rest = a.storage
        offsets = []
        for d in range(rank):
            offsets.append(rest // strides[d])
            rest -= offsets[-1] * strides[d]
        if rest == 0 and all(offsets[d] + shape[d] <= buffer[d] for d in range(1, rank)):
            buffer[0] = offsets[0] + shape[0]
            return base, tuple(buffer), tuple(offsets)
    buffer[0] = shape[0]
    return a.ptr, tuple(buffer), (0,) * rank


def _fill_region(region, shape, offsets, extents):
    region.rank = len(shape)
    for d in range(len(shape)):
        region.shape[d] = shape[d]
        region.offsets[d] = offsets[d]
        region.extents[d] = extents[d]


def _stream_of(stream, arrays):
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr", "handle"):
            value = getattr(stream, attr, None)
            if isinstance(value, int):
                return value
        raise InvalidArgumentError(1, f"stream={stream!r}: give a CUstream handle (int) or an "
                                   "object with .cuda_stream or .ptr")
    for a in arrays:
        if a.torch:
            return _torch_stream(a.device)
    for a in arrays:
        if isinstance(a.stream, int) and a.stream not in (1, 2):
            return a.stream
    return 0


# ---------------------------------------------------------------------------------------
# Plans, cached.

_plans = {}
_plans_lock = threading.Lock()


class _Plan:
    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if self.handle and _lib is not None:
            _lib.tt_plan_destroy(self.handle)
            self.handle = None

    def info(self):
        out = {}
        for key in ("level", "detail", "kernel", "prebuilt"):
            value = _lib.tt_plan_info(self.handle, key.encode())
            out[key] = value.decode() if value is not None else None
        out["prebuilt"] = out["prebuilt"] == "1"
        return out


def _plan(kind, desc, key):
    with _plans_lock:
        plan = _plans.get(key)
    if plan is not None:
        return plan
    handle = ctypes.c_void_p()
    _check(getattr(_lib, "tt_plan_create_" + kind)(ctypes.byref(desc), ctypes.byref(handle)))
    plan = _Plan(handle)
    with _plans_lock:
        return _plans.setdefault(key, plan)


def clear_plan_cache():
    """Drops every cached plan (each unloads its kernel once no other holds it)."""
    with _plans_lock:
        _plans.clear()
    _fast.clear()


def _set_device(a):
    """Makes `a`'s device current, so the plan binds to its context (torch tensors)."""
    if a.torch:
        torch = sys.modules["torch"]
        return torch.cuda.device(a.device)
    return _NullContext()


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _pair(value, name):
    """An int or a pair of ints: kernel_size, stride and dilation >= 1, padding >= 0."""
    if isinstance(value, int):
        pair = (value, value)
    else:
        try:
            pair = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise InvalidArgumentError(1, f"{name}={value!r}: an int or a pair of ints") from None
        if len(pair) != 2:
            raise InvalidArgumentError(1, f"{name}={value!r}: an int or a pair of ints")
    least = 0 if name == "padding" else 1
    if min(pair) < least:
        raise InvalidArgumentError(1, f"{name}={value!r}: each must be >= {least}")
    return pair


def _layout(layout):
    if layout not in _LAYOUTS:
        raise InvalidArgumentError(1, f"layout={layout!r}: accepted are 'nhwc' (image [N, H, W, C], "
                                   "columns [N*OH*OW, KH*KW*C]) and 'nchw' (image [N, C, H, W], "
                                   "columns [N, C*KH*KW, OH*OW] as F.unfold/F.fold)")
    return layout


def _conv_desc(dtype, n, h, w, c, kernel_size, stride, dilation, padding, layout):
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    desc = _ConvDesc(_DTYPES[dtype][0], n, h, w, c, kh, kw, sh, sw, dh, dw, ph, pw,
                     _LAYOUTS[layout])
    key = (dtype, n, h, w, c, kh, kw, sh, sw, dh, dw, ph, pw, layout)
    return desc, key


def _out_size(size, k, s, d, p):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _dense(a, name):
    expected, step = [], 1
    for d in reversed(a.shape):
        expected.append(step)
        step *= d
    expected = tuple(reversed(expected))
    if any(s != e for s, e, d in zip(a.strides, expected, a.shape) if d > 1):
        raise InvalidArgumentError(1, f"{name} has strides {a.strides} for shape {a.shape}; "
                                   "tiletune needs it contiguous (call .contiguous())")
    if a.ptr % 16:
        raise InvalidArgumentError(1, f"{name} starts at {a.ptr:#x}, not a multiple of 16 bytes")


def _empty_like_input(x, shape, dtype_of):
    if _is_torch(x):
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=x.dtype, device=x.device)
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        import cupy  # noqa: PLC0415 (only when the input is a CuPy array)
        return cupy.empty(shape, dtype=x.dtype)
    raise InvalidArgumentError(1, f"tiletune allocates outputs for PyTorch and CuPy arrays only; "
                               f"pass out= (shape {tuple(shape)}, dtype {dtype_of})")


# ---------------------------------------------------------------------------------------
# The operators: each call is prepared (arrays read, checked, its plan's descriptor and
# cache key made) the same way for running it and for explaining it.


class _Call:
    __slots__ = ("kind", "desc", "key", "device_of", "input", "output")


def _prepare_copy(dst, src):
    d, s = _array(dst, "dst", output=True), _array(src, "src")
    if d.shape != s.shape:
        raise InvalidArgumentError(1, f"dst has shape {d.shape} and src {s.shape}; they must match")
    if d.dtype != s.dtype:
        raise InvalidArgumentError(1, f"dst is {d.dtype} and src {s.dtype}; tiletune copies "
                                   "without converting")
    if d.torch and s.torch and d.device != s.device:
        raise InvalidArgumentError(1, f"dst is on cuda:{d.device} and src on cuda:{s.device}")
    extents, s_strides, d_strides = _squeezed(s.shape, s.strides, d.strides)
    s_base, s_shape, s_off = _region(s, extents, s_strides, "src")
    d_base, d_shape, d_off = _region(d, extents, d_strides, "dst")
    for base, name in ((s_base, "src"), (d_base, "dst")):
        if base % 16:
            raise InvalidArgumentError(1, f"{name}'s buffer starts at {base:#x}, not a multiple "
                                       "of 16 bytes")
    call = _Call()
    call.kind = "copy"
    call.desc = _CopyDesc()
    call.desc.dtype = _DTYPES[s.dtype][0]
    _fill_region(call.desc.src, s_shape, s_off, extents)
    _fill_region(call.desc.dst, d_shape, d_off, extents)
    call.key = ("copy", s.dtype, s.device, s_shape, s_off, extents, d_shape, d_off)
    call.device_of = d
    call.input, call.output = (s, s_base), (d, d_base)
    return call


def _prepare_im2col(x, kernel_size, stride, dilation, padding, layout):
    a = _array(x, "x")
    nchw = _layout(layout) == "nchw"
    if len(a.shape) != 4:
        raise InvalidArgumentError(1, f"x has shape {a.shape}; im2col takes an "
                                   f"{'NCHW image [N, C, H, W]' if nchw else 'NHWC image [N, H, W, C]'}")
    _dense(a, "x")
    n, c, h, w = a.shape if nchw else (a.shape[0], a.shape[3], a.shape[1], a.shape[2])
    call = _Call()
    call.kind = "im2col"
    call.desc, key = _conv_desc(a.dtype, n, h, w, c, kernel_size, stride, dilation, padding,
                                layout)
    kh, kw, sh, sw, dh, dw, ph, pw = key[5:13]
    oh, ow = max(_out_size(h, kh, sh, dh, ph), 0), max(_out_size(w, kw, sw, dw, pw), 0)
    call.key = ("im2col", a.device) + key
    call.device_of = a
    call.input = (a, a.ptr)
    # The shape, until bound.
    call.output = (n, c * kh * kw, oh * ow) if nchw else (n * oh * ow, kh * kw * c)
    return call


def _prepare_col2im(cols, output_size, kernel_size, stride, dilation, padding, layout):
    m = _array(cols, "cols")
    nchw = _layout(layout) == "nchw"
    matrix = "[N, C*KH*KW, OH*OW]" if nchw else "[N*OH*OW, KH*KW*C]"
    if len(m.shape) != (3 if nchw else 2):
        raise InvalidArgumentError(1, f"cols has shape {m.shape}; col2im takes {matrix}"
                                   f"{' (layout nchw)' if nchw else ''}")
    _dense(m, "cols")
    h, w = _pair(output_size, "output_size")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    oh, ow = _out_size(h, kh, sh, dh, ph), _out_size(w, kw, sw, dw, pw)
    if nchw:
        n, rows, length = m.shape
        bad = oh < 1 or ow < 1 or length != oh * ow or rows % (kh * kw)
        c = rows // (kh * kw)
    else:
        rows, width = m.shape
        bad = oh < 1 or ow < 1 or rows % (oh * ow) or width % (kh * kw)
        n, c = (rows // (oh * ow), width // (kh * kw)) if not bad else (0, 0)
    if bad:
        raise InvalidArgumentError(1, f"cols has shape {m.shape}, not {matrix} for a "
                                   f"{h}x{w} image and a {kh}x{kw} window (OH={oh}, OW={ow})")
    call = _Call()
    call.kind = "col2im"
    call.desc, key = _conv_desc(m.dtype, n, h, w, c, (kh, kw), (sh, sw), (dh, dw), (ph, pw),
                                layout)
    call.key = ("col2im", m.device) + key
    call.device_of = m
    call.input = (m, m.ptr)
    call.output = (n, c, h, w) if nchw else (n, h, w, c)
    return call


def _bind_output(call, source, out, what):
    """The call's output array: `out`, checked against the shape the call produces, or a new
    one like `source`."""
    shape, dtype = call.output, call.input[0].dtype
    if out is None:
        out = _empty_like_input(source, shape, dtype)
    o = _array(out, "out", output=True)
    source_array = call.input[0]
    if o.torch and source_array.torch and o.device != source_array.device:
        raise InvalidArgumentError(1, f"out is on cuda:{o.device} and the input on "
                                   f"cuda:{source_array.device}; they must be on one device")
    if o.shape != shape or o.dtype != dtype:
        raise InvalidArgumentError(1, f"out is {o.dtype} {o.shape}; {what} needs {dtype} {shape}")
    _dense(o, "out")
    call.output = (o, o.ptr)
    return out


def _run(call, stream):
    with _plans_lock:
        plan = _plans.get(call.key)
    if plan is None:  # made with the array's device current, so it binds to its context
        with _set_device(call.device_of):
            plan = _plan(call.kind, call.desc, call.key)
    arrays = (call.output[0], call.input[0])
    _check(_lib.tt_plan_execute(plan.handle, call.input[1], call.output[1],
                                _stream_of(stream, arrays)))
    return plan


# A warm call on PyTorch tensors skips reading and checking the arrays: what a call made of
# them (its plan, and where its buffers start relative to the tensors' data pointers) is
# kept under the tensors' metadata, and only the addresses are read again.
_fast = {}
_FAST_MAX = 4096


def _torch_key(t):
    return (t.shape, t.stride(), t.storage_offset(), t.dtype, t.get_device())


def _args_key(*values):
    """The call's other arguments as a key, or None when one is not an int, a str or a
    tuple or list of ints (the full path then reads and checks it). Types are exact, so
    3.0, True or an int subclass never finds what 3 kept."""
    lists = False
    for v in values:
        t = type(v)
        if t is int or t is str:
            continue
        if t is tuple or t is list:
            for e in v:
                if type(e) is not int:
                    return None
            lists = lists or t is list
            continue
        return None
    if lists:
        return tuple(tuple(v) if type(v) is list else v for v in values)
    return values


def _fast_run(key, inp, out, stream):
    """Launches the call kept under `key` on tensors `inp`, `out`; False when there is none
    (or its buffers would not be 16-byte aligned: the full path then says so)."""
    entry = _fast.get(key)
    if entry is None or stream is not None:
        return False
    plan, in_delta, out_delta = entry
    i, o = inp.data_ptr() + in_delta, out.data_ptr() + out_delta
    if i % 16 or o % 16:
        return False
    _check(_lib.tt_plan_execute(plan.handle, i, o, _torch_stream(inp.device)))
    return True


def _torch_stream(device):
    """The handle of PyTorch's current stream on `device` (a torch.device or an index):
    read raw (as torch.compile's generated code does) where PyTorch offers it, without
    making a Stream object."""
    global _raw_stream
    index = device if isinstance(device, int) else device.index
    raw = _raw_stream
    if raw is None:  # looked up once: False where this PyTorch lacks it
        raw = _raw_stream = getattr(sys.modules["torch"]._C, "_cuda_getCurrentRawStream", False)
    if raw and index is not None:
        return raw(index)
    return sys.modules["torch"].cuda.current_stream(device).cuda_stream


_raw_stream = None


def _fast_conv(kind, inp, out, stream, args):
    """im2col's and col2im's warm path: (key, out, True) when the call ran from what an
    earlier one kept (allocating `out` when it is None), else (key or None, out, False).
    A new output needs only the input's metadata: it starts its own allocation, so where
    the call writes is its data pointer."""
    if stream is not None or not _is_torch(inp) or not (out is None or _is_torch(out)):
        return None, out, False
    args = _args_key(*args)
    if args is None:
        return None, out, False
    key = (kind, _torch_key(inp), args)
    if out is not None:
        return key, out, _fast_run(key + (_torch_key(out),), inp, out, None)
    entry = _fast.get(key)
    if entry is None:
        return key, out, False
    shape, plan, in_delta = entry
    out = inp.new_empty(shape)
    i, o = inp.data_ptr() + in_delta, out.data_ptr()
    if i % 16 or o % 16:  # the full path says why
        return key, out, False
    _check(_lib.tt_plan_execute(plan.handle, i, o, _torch_stream(inp.get_device())))
    return key, out, True


def _keep_fast_conv(key, plan, call, inp, out, new):
    """Keeps what a call made for _fast_conv: under the output's metadata too, or, for an
    output the call allocated (`new`), under the input's alone."""
    if key is None or not _is_torch(out):
        return
    if not new:
        _keep_fast(key + (_torch_key(out),), plan, call, inp, out)
    elif call.output[1] == out.data_ptr():
        if len(_fast) >= _FAST_MAX:
            _fast.clear()
        _fast[key] = (tuple(out.shape), plan, call.input[1] - inp.data_ptr())


def _keep_fast(key, plan, call, inp, out):
    if key is None:
        return
    if len(_fast) >= _FAST_MAX:
        _fast.clear()
    _fast[key] = (plan, call.input[1] - inp.data_ptr(), call.output[1] - out.data_ptr())


def copy_(dst, src, stream=None):
    """dst[...] = src for CUDA arrays of one shape and dtype: slices, strided views and
    offsets of row-major buffers (last dimension contiguous). Returns dst."""
    key = None
    if stream is None and _is_torch(dst) and _is_torch(src):
        key = ("copy", _torch_key(dst), _torch_key(src))
        if _fast_run(key, src, dst, None):
            return dst
    call = _prepare_copy(dst, src)
    plan = _run(call, stream)
    _keep_fast(key, plan, call, src, dst)
    return dst


def batch_copy(dst, src, table, regions=False, item=None, stream=None):
    """Many items copied in one launch, listed in a device table of int64 entries `table`
    ([N, 2] or [N, 3], contiguous). Blocks (the default): `src` [S, ...] and `dst`
    [D, ...] are pools of blocks of one shape, and row i of `table` copies block table[i, 0]
    of src to block table[i, 1] of dst (vLLM's block_mapping). Regions (regions=True): `src`
    and `dst` are pools of elements, whole multiples of `item` (the largest item's elements),
    and row i copies table[i, 2] elements from element table[i, 0] of src to element
    table[i, 1] of dst. Rows outside the pools are skipped; destinations must not overlap.
    Returns dst."""
    d, s = _array(dst, "dst", output=True), _array(src, "src")
    t = _array(table, "table", table=True)
    if d.dtype != s.dtype:
        raise InvalidArgumentError(1, f"dst is {d.dtype} and src {s.dtype}; tiletune copies "
                                   "without converting")
    if d.torch and s.torch and d.device != s.device:
        raise InvalidArgumentError(1, f"dst is on cuda:{d.device} and src on cuda:{s.device}")
    fields = 3 if regions else 2
    if len(t.shape) != 2 or t.shape[1] != fields:
        raise InvalidArgumentError(1, f"table has shape {t.shape}; "
                                   f"{'regions' if regions else 'blocks'} take [N, {fields}] int64")
    _dense(t, "table")
    _dense(d, "dst")
    _dense(s, "src")
    if regions:
        if item is None or int(item) < 1:
            raise InvalidArgumentError(1, "regions=True needs item=, the largest item's elements")
        item = int(item)
        sizes = [_numel(a.shape) for a in (s, d)]
        for n, name in zip(sizes, ("src", "dst")):
            if n % item:
                raise InvalidArgumentError(1, f"{name} holds {n} elements, not a multiple of "
                                           f"item={item}")
        src_items, dst_items = sizes[0] // item, sizes[1] // item
    else:
        if len(s.shape) < 1 or len(d.shape) < 1 or s.shape[1:] != d.shape[1:]:
            raise InvalidArgumentError(1, f"src {s.shape} and dst {d.shape} are not pools of "
                                       "blocks of one shape [blocks, ...]")
        item = _numel(s.shape[1:])
        src_items, dst_items = s.shape[0], d.shape[0]
    count = t.shape[0]
    if count == 0:
        return dst
    # Plans are kept per power of two of the count: the kernel serves every count, and the
    # count only steers which tuned record answers.
    bucket = min(1 << max(count - 1, 0).bit_length(), max(dst_items, 1))
    key = ("batch_copy", s.dtype, s.device, regions, item, src_items, dst_items, bucket)
    with _plans_lock:
        plan = _plans.get(key)
    if plan is None:
        desc = _BatchCopyDesc()
        desc.dtype = _DTYPES[s.dtype][0]
        desc.regions = 1 if regions else 0
        desc.count, desc.item = bucket, item
        desc.src_items, desc.dst_items = src_items, dst_items
        with _set_device(d):
            plan = _plan("batch_copy", desc, key)
    _check(_lib.tt_plan_execute_items(plan.handle, s.ptr, d.ptr, t.ptr, count,
                                      _stream_of(stream, (d, s, t))))
    return dst


def _numel(shape):
    n = 1
    for e in shape:
        n *= e
    return n


def im2col(x, kernel_size, stride=1, dilation=1, padding=0, layout="nhwc", out=None,
           stream=None):
    """The column matrix [N*OH*OW, KH*KW*C] of a contiguous NHWC image `x` [N, H, W, C]:
    row (n, oh, ow) holds the window's taps kh, kw, then channels, zero where the window
    leaves the image. With layout='nchw', `x` is [N, C, H, W] and the result
    [N, C*KH*KW, OH*OW], F.unfold's. Into `out` when given."""
    key, out, done = _fast_conv("im2col", x, out, stream,
                                (kernel_size, stride, dilation, padding, layout))
    if done:
        return out
    call = _prepare_im2col(x, kernel_size, stride, dilation, padding, layout)
    new = out is None
    out = _bind_output(call, x, out, "im2col of x")
    _keep_fast_conv(key, _run(call, stream), call, x, out, new)
    return out


def col2im(cols, output_size, kernel_size, stride=1, dilation=1, padding=0, layout="nhwc",
           out=None, stream=None):
    """The NHWC image [N, H, W, C] summed back from a column matrix [N*OH*OW, KH*KW*C]
    (im2col's adjoint: each tap adds into the pixel it was read from; taps summed in f32,
    rounded once). With layout='nchw', `cols` is [N, C*KH*KW, OH*OW] and the result
    [N, C, H, W], F.fold's (its taps summed in F.fold's order). `output_size` is (H, W).
    Into `out` when given."""
    key, out, done = _fast_conv("col2im", cols, out, stream,
                                (output_size, kernel_size, stride, dilation, padding, layout))
    if done:
        return out
    call = _prepare_col2im(cols, output_size, kernel_size, stride, dilation, padding, layout)
    new = out is None
    out = _bind_output(call, cols, out, "col2im")
    _keep_fast_conv(key, _run(call, stream), call, cols, out, new)
    return out


def explain(op, *args, **kwargs):
    """What would run for op ('copy', 'im2col' or 'col2im') given that operator's arguments
    (copy: dst, src), and why: a dict of level (exact, nearest, heuristic), detail, kernel
    and prebuilt. Nothing is launched."""
    operators = {"copy": (copy_, _prepare_copy), "im2col": (im2col, _prepare_im2col),
                 "col2im": (col2im, _prepare_col2im)}
    if op not in operators:
        raise InvalidArgumentError(1, f"op={op!r}: accepted are 'copy', 'im2col', 'col2im'")
    public, prepare = operators[op]
    # The operator's own signature reads the arguments, defaults included.
    bound = inspect.signature(public).bind(*args, **kwargs)
    bound.apply_defaults()
    given = {k: v for k, v in bound.arguments.items() if k not in ("out", "stream")}
    call = prepare(**given)
    with _set_device(call.device_of):
        return _plan(call.kind, call.desc, call.key).info()
