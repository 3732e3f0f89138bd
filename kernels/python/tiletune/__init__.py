"""tiletune from Python: tuned GPU copies, im2col and col2im on any CUDA array.

    import tiletune
    tiletune.copy_(dst, src)                           # strided views, slices, offsets
    cols = tiletune.im2col(x, 3, padding=1)            # NHWC x -> [N*OH*OW, KH*KW*C]
    img = tiletune.col2im(cols, (H, W), 3, padding=1)  # the adjoint: NHWC image
    tiletune.explain("im2col", x, 3, padding=1)        # what would run, and why

Arrays are PyTorch tensors, or any object with __cuda_array_interface__ (CuPy, Numba,
JAX through DLPack-to-CuPy); tiletune depends on none of them. Work goes on the
producer's current stream (torch.cuda.current_stream() for tensors), or `stream=` (an
int CUstream handle, or an object with .cuda_stream or .ptr). Plans are cached by shape,
dtype, strides, alignment and device, so a repeated call costs one launch. The library
is libtiletune.so (the C API, kernels/tiletune_c.h), carried in this package.
"""

import ctypes
import os
import sys
import threading

__all__ = [
    "Error",
    "NoGpuError",
    "copy_",
    "im2col",
    "col2im",
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
    ]


_ABI_VERSION = 1


def _load():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", "libtiletune.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"tiletune: cannot load {path}: {e}") from e
    lib.tt_version.restype = ctypes.c_char_p
    lib.tt_abi_version.restype = ctypes.c_int
    lib.tt_last_error.restype = ctypes.c_char_p
    for name, desc in (("copy", _CopyDesc), ("im2col", _ConvDesc), ("col2im", _ConvDesc)):
        f = getattr(lib, "tt_plan_create_" + name)
        f.argtypes = [ctypes.POINTER(desc), ctypes.POINTER(ctypes.c_void_p)]
        f.restype = ctypes.c_int
    lib.tt_plan_execute.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                                    ctypes.c_void_p]
    lib.tt_plan_execute.restype = ctypes.c_int
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
}
_TORCH_DTYPES = {
    "torch.float64": "f64", "torch.float32": "f32", "torch.float16": "f16",
    "torch.bfloat16": "bf16", "torch.float8_e4m3fn": "f8e4m3", "torch.int32": "i32",
    "torch.int8": "i8", "torch.uint8": "u8",
}
_TYPESTRS = {"<f8": "f64", "<f4": "f32", "<f2": "f16", "<i4": "i32", "|i1": "i8",
             "|u1": "u8", "<i1": "i8", "<u1": "u8"}


class _Array:
    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "torch", "stream", "storage")

    def __repr__(self):
        return f"array({self.dtype}, shape={self.shape}, strides={self.strides})"


def _is_torch(obj):
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr")


def _array(obj, name):
    a = _Array()
    a.stream = None
    a.storage = None
    if _is_torch(obj):
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
        a.storage = (storage, (a.ptr - storage) // itemsize) if (a.ptr - storage) % itemsize == 0 else None
        return a
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise InvalidArgumentError(1, f"{name} is a {type(obj).__name__}: tiletune takes a CUDA "
                                   "array (a PyTorch tensor or an object with "
                                   "__cuda_array_interface__)")
    typestr = cai.get("typestr", "")
    dtype = _TYPESTRS.get(typestr)
    if dtype is None:
        raise InvalidArgumentError(1, f"{name} has typestr {typestr!r}; accepted are "
                                   + ", ".join(sorted(_TYPESTRS)))
    itemsize = _DTYPES[dtype][1]
    a.ptr = int(cai["data"][0])
    if cai["data"][1]:
        a.stream = None  # read-only: fine for an input; outputs are checked by the caller
    a.shape = tuple(int(d) for d in cai["shape"])
    byte_strides = cai.get("strides")
    if byte_strides is None:
        strides, step = [], 1
        for d in reversed(a.shape):
            strides.append(step)
            step *= d
        a.strides = tuple(reversed(strides))
    else:
        if any(s % itemsize for s in byte_strides):
            raise InvalidArgumentError(1, f"{name} has byte strides {tuple(byte_strides)}, not "
                                       f"multiples of its {itemsize}-byte elements")
        a.strides = tuple(int(s) // itemsize for s in byte_strides)
    a.dtype = dtype
    a.device = 0
    a.torch = False
    a.storage = None
    a.stream = cai.get("stream")
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
            torch = sys.modules["torch"]
            return torch.cuda.current_stream(a.device).cuda_stream
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


def _conv_desc(dtype, n, h, w, c, kernel_size, stride, dilation, padding):
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    desc = _ConvDesc(_DTYPES[dtype][0], n, h, w, c, kh, kw, sh, sw, dh, dw, ph, pw)
    key = (dtype, n, h, w, c, kh, kw, sh, sw, dh, dw, ph, pw)
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
# The operators.


def copy_(dst, src, stream=None):
    """dst[...] = src for CUDA arrays of one shape and dtype: slices, strided views and
    offsets of row-major buffers (last dimension contiguous). Returns dst."""
    d, s = _array(dst, "dst"), _array(src, "src")
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
    desc = _CopyDesc()
    desc.dtype = _DTYPES[s.dtype][0]
    _fill_region(desc.src, s_shape, s_off, extents)
    _fill_region(desc.dst, d_shape, d_off, extents)
    key = ("copy", s.dtype, s.device, s_shape, s_off, extents, d_shape, d_off)
    with _set_device(d):
        plan = _plan("copy", desc, key)
        _check(_lib.tt_plan_execute(plan.handle, s_base, d_base, _stream_of(stream, (d, s))))
    return dst


def im2col(x, kernel_size, stride=1, dilation=1, padding=0, out=None, stream=None):
    """The column matrix [N*OH*OW, KH*KW*C] of a contiguous NHWC image `x` [N, H, W, C]:
    row (n, oh, ow) holds the window's taps kh, kw, then channels, zero where the window
    leaves the image. Into `out` when given."""
    a = _array(x, "x")
    if len(a.shape) != 4:
        raise InvalidArgumentError(1, f"x has shape {a.shape}; im2col takes an NHWC image [N, H, W, C]")
    _dense(a, "x")
    n, h, w, c = a.shape
    desc, key = _conv_desc(a.dtype, n, h, w, c, kernel_size, stride, dilation, padding)
    kh, kw, sh, sw, dh, dw, ph, pw = key[5:]
    oh, ow = _out_size(h, kh, sh, dh, ph), _out_size(w, kw, sw, dw, pw)
    shape = (n * max(oh, 0) * max(ow, 0), kh * kw * c)
    if out is None:
        out = _empty_like_input(x, shape, a.dtype)
    o = _array(out, "out")
    if o.shape != shape or o.dtype != a.dtype:
        raise InvalidArgumentError(1, f"out is {o.dtype} {o.shape}; im2col of x needs {a.dtype} {shape}")
    _dense(o, "out")
    with _set_device(a):
        plan = _plan("im2col", desc, ("im2col", a.device) + key)
        _check(_lib.tt_plan_execute(plan.handle, a.ptr, o.ptr, _stream_of(stream, (a, o))))
    return out


def col2im(cols, output_size, kernel_size, stride=1, dilation=1, padding=0, out=None,
           stream=None):
    """The NHWC image [N, H, W, C] summed back from a column matrix [N*OH*OW, KH*KW*C]
    (im2col's adjoint: each tap adds into the pixel it was read from; taps summed in f32,
    rounded once). `output_size` is (H, W). Into `out` when given."""
    m = _array(cols, "cols")
    if len(m.shape) != 2:
        raise InvalidArgumentError(1, f"cols has shape {m.shape}; col2im takes [N*OH*OW, KH*KW*C]")
    _dense(m, "cols")
    h, w = _pair(output_size, "output_size")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    ph, pw = _pair(padding, "padding")
    oh, ow = _out_size(h, kh, sh, dh, ph), _out_size(w, kw, sw, dw, pw)
    rows, width = m.shape
    if oh < 1 or ow < 1 or rows % (oh * ow) or width % (kh * kw):
        raise InvalidArgumentError(1, f"cols has shape {m.shape}, not [N*OH*OW, KH*KW*C] for a "
                                   f"{h}x{w} image and a {kh}x{kw} window (OH={oh}, OW={ow})")
    n, c = rows // (oh * ow), width // (kh * kw)
    desc, key = _conv_desc(m.dtype, n, h, w, c, (kh, kw), (sh, sw), (dh, dw), (ph, pw))
    shape = (n, h, w, c)
    if out is None:
        out = _empty_like_input(cols, shape, m.dtype)
    o = _array(out, "out")
    if o.shape != shape or o.dtype != m.dtype:
        raise InvalidArgumentError(1, f"out is {o.dtype} {o.shape}; col2im needs {m.dtype} {shape}")
    _dense(o, "out")
    with _set_device(m):
        plan = _plan("col2im", desc, ("col2im", m.device) + key)
        _check(_lib.tt_plan_execute(plan.handle, m.ptr, o.ptr, _stream_of(stream, (m, o))))
    return out


def explain(op, *args, **kwargs):
    """What would run for op ('copy', 'im2col' or 'col2im') with these arguments, and why:
    a dict of level (exact, nearest, heuristic), detail, kernel and prebuilt. Nothing is
    launched. explain('copy', dst, src) takes copy_'s arguments."""
    if op == "copy":
        dst, src = args[0], args[1]
        d, s = _array(dst, "dst"), _array(src, "src")
        if d.shape != s.shape or d.dtype != s.dtype:
            raise InvalidArgumentError(1, f"dst is {d.dtype} {d.shape} and src {s.dtype} {s.shape}; "
                                       "they must match")
        extents, s_strides, d_strides = _squeezed(s.shape, s.strides, d.strides)
        _, s_shape, s_off = _region(s, extents, s_strides, "src")
        _, d_shape, d_off = _region(d, extents, d_strides, "dst")
        desc = _CopyDesc()
        desc.dtype = _DTYPES[s.dtype][0]
        _fill_region(desc.src, s_shape, s_off, extents)
        _fill_region(desc.dst, d_shape, d_off, extents)
        with _set_device(d):
            return _plan("copy", desc, ("copy", s.dtype, s.device, s_shape, s_off, extents,
                                        d_shape, d_off)).info()
    if op == "im2col":
        a = _array(args[0], "x")
        if len(a.shape) != 4:
            raise InvalidArgumentError(1, f"x has shape {a.shape}; im2col takes [N, H, W, C]")
        names = ("kernel_size", "stride", "dilation", "padding")
        given = dict(zip(names, args[1:]), **kwargs)
        desc, key = _conv_desc(a.dtype, *a.shape, given.get("kernel_size"), given.get("stride", 1),
                               given.get("dilation", 1), given.get("padding", 0))
        with _set_device(a):
            return _plan("im2col", desc, ("im2col", a.device) + key).info()
    if op == "col2im":
        m = _array(args[0], "cols")
        names = ("output_size", "kernel_size", "stride", "dilation", "padding")
        given = dict(zip(names, args[1:]), **kwargs)
        h, w = _pair(given["output_size"], "output_size")
        kh, kw = _pair(given["kernel_size"], "kernel_size")
        sh, sw = _pair(given.get("stride", 1), "stride")
        dh, dw = _pair(given.get("dilation", 1), "dilation")
        ph, pw = _pair(given.get("padding", 0), "padding")
        oh, ow = _out_size(h, kh, sh, dh, ph), _out_size(w, kw, sw, dw, pw)
        if len(m.shape) != 2 or oh < 1 or ow < 1 or m.shape[0] % (oh * ow) or m.shape[1] % (kh * kw):
            raise InvalidArgumentError(1, f"cols has shape {m.shape}, not [N*OH*OW, KH*KW*C]")
        desc, key = _conv_desc(m.dtype, m.shape[0] // (oh * ow), h, w, m.shape[1] // (kh * kw),
                               (kh, kw), (sh, sw), (dh, dw), (ph, pw))
        with _set_device(m):
            return _plan("col2im", desc, ("col2im", m.device) + key).info()
    raise InvalidArgumentError(1, f"op={op!r}: accepted are 'copy', 'im2col', 'col2im'")
