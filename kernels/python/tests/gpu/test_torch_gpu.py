"""tiletune from PyTorch on a GPU: every operator against PyTorch's own on fresh random
data with the output poisoned first (im2col and copies bit-exact; col2im within f32
summation order), strided views and slices, streams, the plan cache, CUDA graph capture,
the torch.library operators under autograd (gradcheck: im2col and col2im are adjoints)
and torch.compile."""
import pytest
import torch
import torch.nn.functional as F

import tiletune
import tiletune.torch as ttt

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CASES = [  # N, H, W, C, kernel, stride, dilation, padding
    (2, 9, 11, 8, 3, 1, 1, 1),
    (1, 16, 16, 3, (4, 2), (2, 1), 1, (1, 0)),
    (2, 14, 14, 16, 3, 2, 2, 2),
    (1, 32, 32, 4, 16, 16, 1, 0),
    (3, 7, 5, 32, 1, 1, 1, 0),
]
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def reference_im2col(x, k, s, d, p):
    n, h, w, c = x.shape
    kh, kw = pair(k)
    nchw = x.permute(0, 3, 1, 2)
    if x.dtype in (torch.float16, torch.bfloat16):
        nchw = nchw.float()  # exact both ways
    cols = F.unfold(nchw, (kh, kw), dilation=d, padding=p, stride=s).to(x.dtype)
    L = cols.shape[-1]
    return cols.view(n, c, kh, kw, L).permute(0, 4, 2, 3, 1).reshape(n * L, kh * kw * c)


def reference_col2im(cols, n, h, w, c, k, s, d, p):
    kh, kw = pair(k)
    L = cols.shape[0] // n
    m = cols.view(n, L, kh, kw, c).permute(0, 4, 2, 3, 1).reshape(n, c * kh * kw, L)
    img = F.fold(m.double(), (h, w), (kh, kw), dilation=d, padding=p, stride=s)
    return img.permute(0, 2, 3, 1).to(cols.dtype)


def bits(t):
    """The tensor's bytes as integers, so NaN payloads and -0.0 compare exactly."""
    return t.contiguous().view(torch.uint8)


def poisoned(shape, dtype):
    return torch.full(shape, float("nan") if dtype.is_floating_point else 77, dtype=dtype, device="cuda")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_im2col_is_bit_exact(case, dtype):
    n, h, w, c, k, s, d, p = case
    x = torch.randn(n, h, w, c, device="cuda").to(dtype)
    expected = reference_im2col(x, k, s, d, p)
    out = poisoned(expected.shape, dtype)
    got = tiletune.im2col(x, k, stride=s, dilation=d, padding=p, out=out)
    assert got is out
    torch.cuda.synchronize()
    assert torch.equal(bits(got), bits(expected))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("case", CASES)
def test_col2im_matches_fold(case, dtype):
    n, h, w, c, k, s, d, p = case
    kh, kw = pair(k)
    cols_shape = reference_im2col(torch.zeros(n, h, w, c, device="cuda"), k, s, d, p).shape
    cols = torch.randn(cols_shape, device="cuda").to(dtype)
    expected = reference_col2im(cols, n, h, w, c, k, s, d, p)
    got = tiletune.col2im(cols, (h, w), k, stride=s, dilation=d, padding=p)
    torch.cuda.synchronize()
    # Taps summed in f32 and rounded once: within one rounding of the exact (f64) sum.
    tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 1e-6}[dtype]
    torch.testing.assert_close(got.double(), expected.double(), rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32])
def test_copy_of_views_slices_and_offsets(dtype):
    src = torch.randint(0, 100, (64, 33, 4), device="cuda").to(dtype)
    # Drop the alpha channel of RGBA frames: rows of 3 at a pitch of 4.
    dst = poisoned((64, 33, 3), dtype)
    tiletune.copy_(dst, src[..., :3])
    assert torch.equal(dst, src[..., :3])
    # A window of a larger buffer into a window of another, both at offsets.
    big = poisoned((80, 50), dtype)
    a = torch.randint(0, 100, (70, 60), device="cuda").to(dtype)
    tiletune.copy_(big[5:69, 7:47], a[3:67, 11:51])
    assert torch.equal(big[5:69, 7:47], a[3:67, 11:51])
    # Unit dimensions and a transposed-outer view stay regions.
    c = torch.randint(0, 100, (1, 16, 1, 64), device="cuda").to(dtype)
    d = poisoned((1, 16, 1, 64), dtype)
    tiletune.copy_(d, c)
    assert torch.equal(d, c)


def test_streams_plan_cache_and_graph_capture():
    x = torch.randn(2, 16, 16, 8, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        first = tiletune.im2col(x, 3, padding=1)
    side.synchronize()
    plans = len(tiletune._plans)
    again = tiletune.im2col(x, 3, padding=1)
    assert len(tiletune._plans) == plans  # served from the cache
    assert torch.equal(first, again)
    # Captured in a CUDA graph (the plan exists already) and replayed on new data.
    out = torch.empty_like(again)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tiletune.im2col(x, 3, padding=1, out=out)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, reference_im2col(x, 3, 1, 1, 1))


def test_explain_names_what_runs():
    x = torch.randn(2, 16, 16, 8, device="cuda", dtype=torch.float16)
    info = tiletune.explain("im2col", x, 3, padding=1)
    assert info["level"] in ("exact", "nearest", "heuristic")
    assert info["kernel"]


def test_col2im_refuses_integers_and_f64_naming_them():
    with pytest.raises(tiletune.InvalidArgumentError, match="col2im sums column entries"):
        tiletune.col2im(torch.zeros(30, 27, device="cuda", dtype=torch.float64), (6, 5), 3, padding=1)


def test_torch_ops_autograd_and_compile():
    # im2col's gradient is col2im of the incoming gradient, and col2im's is im2col.
    x = torch.randn(1, 6, 5, 3, device="cuda", requires_grad=True)
    cols = ttt.im2col(x, 3, padding=1)
    g = torch.randn_like(cols)
    cols.backward(g)
    torch.testing.assert_close(x.grad, ttt.col2im(g, (6, 5), 3, padding=1))
    c = torch.randn(30, 27, device="cuda", requires_grad=True)
    img = ttt.col2im(c, (6, 5), 3, padding=1)
    h = torch.randn_like(img)
    img.backward(h)
    torch.testing.assert_close(c.grad, ttt.im2col(h, 3, padding=1))
    # They are adjoints: <im2col(x), g> = <x, col2im(g)>.
    lhs = (ttt.im2col(x.detach(), 3, padding=1).double() * g.double()).sum()
    rhs = (x.detach().double() * ttt.col2im(g, (6, 5), 3, padding=1).double()).sum()
    torch.testing.assert_close(lhs, rhs, rtol=1e-5, atol=1e-4)

    def f(t):
        return ttt.col2im(ttt.im2col(t, 3, padding=1) * 2, (6, 5), 3, padding=1)

    compiled = torch.compile(f, backend="aot_eager", fullgraph=True)
    y = x.detach()
    torch.testing.assert_close(compiled(y), f(y))
    d = torch.empty(4, 8, device="cuda")
    s = torch.randn(4, 8, device="cuda")
    ttt.copy_(d, s)
    assert torch.equal(d, s)


# ---------------------------------------------------------------------------------------
# Drop-in F.unfold / F.fold (NCHW, [N, C*KH*KW, L]).

def random_geometries(count, seed):
    """`count` random valid (N, C, H, W, kernel, dilation, padding, stride), asymmetric
    ones included; the same list every run (stable test ids), fresh data every run."""
    import random
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        n, c = rng.randint(1, 3), rng.choice([1, 3, 4, 7, 16, 33])
        h, w = rng.randint(1, 40), rng.randint(1, 40)
        k = (rng.randint(1, 6), rng.randint(1, 6))
        d = (rng.randint(1, 3), rng.randint(1, 3))
        s = (rng.randint(1, 4), rng.randint(1, 4))
        p = (rng.randint(0, (k[0] - 1) * d[0]), rng.randint(0, (k[1] - 1) * d[1]))
        oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        if oh >= 1 and ow >= 1:
            out.append((n, c, h, w, k, d, p, s))
    return out


UNFOLD_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
FOLD_DTYPES = [torch.float16, torch.bfloat16, torch.float32]
UNFOLD_CASES = [(g, UNFOLD_DTYPES[i % 4]) for i, g in enumerate(random_geometries(120, 36))]
FOLD_CASES = [(g, FOLD_DTYPES[i % 3]) for i, g in enumerate(random_geometries(120, 37))]


@pytest.mark.parametrize("geometry,dtype", UNFOLD_CASES)
def test_unfold_is_bit_exact_against_F_unfold(geometry, dtype):
    n, c, h, w, k, d, p, s = geometry
    x = torch.randn(n, c, h, w, device="cuda").to(dtype)
    expected = F.unfold(x, k, dilation=d, padding=p, stride=s)
    got = ttt.unfold(x, k, dilation=d, padding=p, stride=s)
    torch.cuda.synchronize()
    assert got.shape == expected.shape
    assert torch.equal(bits(got), bits(expected))


@pytest.mark.parametrize("geometry,dtype", FOLD_CASES)
def test_fold_is_bit_exact_against_F_fold(geometry, dtype):
    n, c, h, w, k, d, p, s = geometry
    shape = F.unfold(torch.zeros(n, c, h, w, device="cuda"), k, dilation=d, padding=p,
                     stride=s).shape
    cols = torch.randn(shape, device="cuda").to(dtype)
    expected = F.fold(cols, (h, w), k, dilation=d, padding=p, stride=s)
    out = poisoned(expected.shape, dtype)
    got = tiletune.col2im(cols, (h, w), k, stride=s, dilation=d, padding=p, layout="nchw",
                          out=out)
    torch.cuda.synchronize()
    # The taps in F.fold's order, summed in f32 and rounded once: F.fold's bits.
    assert torch.equal(bits(got), bits(expected))
    torch.testing.assert_close(ttt.fold(cols, (h, w), k, dilation=d, padding=p, stride=s),
                               expected, rtol=0, atol=0)


def test_unfold_and_fold_unbatched_and_adjoint():
    x = torch.randn(3, 12, 10, device="cuda", dtype=torch.float64)
    torch.testing.assert_close(ttt.unfold(x, (3, 2), padding=1, stride=(2, 1)),
                               F.unfold(x, (3, 2), padding=1, stride=(2, 1)))
    xs = torch.randn(2, 5, 17, 13, device="cuda")
    y = torch.randn(F.unfold(xs, 3, dilation=2, padding=2).shape, device="cuda")
    lhs = (ttt.unfold(xs, 3, dilation=2, padding=2).double() * y.double()).sum()
    rhs = (xs.double() * ttt.fold(y, (17, 13), 3, dilation=2, padding=2).double()).sum()
    torch.testing.assert_close(lhs, rhs, rtol=1e-5, atol=1e-4)
    cols = torch.randn(5 * 9, 13 * 11, device="cuda")
    torch.testing.assert_close(ttt.fold(cols, (15, 13), 3), F.fold(cols, (15, 13), 3),
                               rtol=0, atol=0)


def test_unfold_fold_gradients_through_a_small_model():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 9, 9, device="cuda", requires_grad=True)
    weight = torch.randn(6, 4 * 9, device="cuda", requires_grad=True)

    def model(unfold, fold, t, wt):
        cols = unfold(t, 3, padding=1)                      # [2, 36, 81]
        mixed = torch.einsum("ok,nkl->nol", wt, cols)      # [2, 6, 81]
        back = fold(mixed.repeat(1, 6, 1), (9, 9), 3, padding=1)  # [2, 4, 9, 9]
        return (back * back).sum()

    ours = model(ttt.unfold, ttt.fold, x, weight)
    gx, gw = torch.autograd.grad(ours, (x, weight))
    theirs = model(F.unfold, F.fold, x, weight)
    tx, tw = torch.autograd.grad(theirs, (x, weight))
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(gx, tx, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(gw, tw, rtol=1e-4, atol=1e-3)
    # unfold's gradient is fold of the incoming gradient (col2im takes no f64, so no
    # gradcheck in f64 here: fold's is checked against F.unfold's below).
    xs = torch.randn(1, 2, 5, 4, device="cuda", requires_grad=True)
    u = ttt.unfold(xs, 2, stride=(1, 2))
    u.backward(torch.ones_like(u))
    torch.testing.assert_close(xs.grad, F.fold(torch.ones_like(u), (5, 4), 2, stride=(1, 2)))
    cd = torch.randn(1, 2 * 4, 4 * 2, device="cuda", dtype=torch.float32, requires_grad=True)
    fold_out = ttt.fold(cd, (5, 4), 2, stride=(1, 2))
    fold_out.backward(torch.ones_like(fold_out))
    torch.testing.assert_close(cd.grad, F.unfold(torch.ones(1, 2, 5, 4, device="cuda"), 2,
                                                 stride=(1, 2)))


def test_compile_vit_patch_embedding_and_conv_as_unfold_matmul():
    torch.manual_seed(1)
    images = torch.randn(4, 3, 64, 64, device="cuda")
    proj = torch.randn(96, 3 * 16 * 16, device="cuda") * 0.02
    kernel = torch.randn(8, 3, 3, 3, device="cuda")

    def vit_embed(t):
        patches = ttt.unfold(t, 16, stride=16)             # [4, 768, 16]
        return (proj @ patches).transpose(1, 2)             # [4, 16, 96]

    def conv(t):
        cols = ttt.unfold(t, 3, padding=1)                  # [4, 27, 4096]
        return (kernel.view(8, -1) @ cols).view(4, 8, 64, 64)

    for f in (vit_embed, conv):
        compiled = torch.compile(f, fullgraph=True)
        torch.testing.assert_close(compiled(images), f(images), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(conv(images), F.conv2d(images, kernel, padding=1),
                               rtol=1e-3, atol=1e-3)


def test_unfold_in_graph_capture():
    x = torch.randn(2, 8, 20, 20, device="cuda", dtype=torch.float16)
    ttt.unfold(x, 3, padding=1)  # the plan exists before capture
    out = torch.empty(2, 72, 400, device="cuda", dtype=torch.float16)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tiletune.im2col(x, 3, padding=1, layout="nchw", out=out)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, F.unfold(x, 3, padding=1))


def test_bad_inputs_are_named_and_nothing_runs():
    with pytest.raises(tiletune.InvalidArgumentError):
        ttt.unfold(torch.randn(1, 2, 5, 5), 3)  # a CPU tensor
    with pytest.raises(tiletune.InvalidArgumentError, match="col2im sums column entries"):
        ttt.fold(torch.zeros(1, 9, 9, device="cuda", dtype=torch.float64), (5, 5), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match="layout='nhcw'"):
        tiletune.im2col(torch.zeros(1, 2, 5, 5, device="cuda"), 3, layout="nhcw")
    small = torch.empty(1, 18, 8, device="cuda")
    with pytest.raises(tiletune.InvalidArgumentError, match="out is"):
        tiletune.im2col(torch.zeros(1, 2, 5, 5, device="cuda"), 3, layout="nchw", out=small)
    with pytest.raises(tiletune.InvalidArgumentError, match="not \\[N, C\\*KH\\*KW, OH\\*OW\\]"):
        ttt.fold(torch.zeros(1, 9, 10, device="cuda"), (5, 5), 3)
    with pytest.raises(tiletune.InvalidArgumentError, match="contiguous"):
        tiletune.im2col(torch.zeros(1, 5, 5, 2, device="cuda").permute(0, 3, 1, 2), 3,
                        layout="nchw")


def test_warm_calls_take_the_fast_path_and_stay_right():
    # The second call of each shape reuses what the first worked out, on new tensors.
    for _ in range(3):
        src = torch.randn(64, 100, device="cuda").half()
        dst = poisoned((64, 40), torch.float16)
        tiletune.copy_(dst, src[:, 7:47])
        assert torch.equal(dst, src[:, 7:47])
        # The same shapes at another offset (another storage offset: another entry).
        tiletune.copy_(dst, src[:, 9:49])
        assert torch.equal(dst, src[:, 9:49])
        x = torch.randn(2, 5, 9, 9, device="cuda")
        assert torch.equal(tiletune.im2col(x, [3, 3], padding=1, layout="nchw"),
                           F.unfold(x, 3, padding=1))
        c = torch.randn(2, 45, 81, device="cuda")
        assert torch.equal(tiletune.col2im(c, (9, 9), 3, padding=1, layout="nchw"),
                           F.fold(c, (9, 9), 3, padding=1))
    # A misaligned view falls through to the full path, which names it.
    base = torch.zeros(1025, device="cuda").half()
    with pytest.raises(tiletune.InvalidArgumentError, match="16 bytes"):
        tiletune.im2col(base[1:].view(1, 1, 32, 32), 3, layout="nchw")


class OnlyCAI:
    """A CUDA array known only by __cuda_array_interface__ (as CuPy and Numba arrays are)."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class OnlyDLPack:
    """A CUDA array known only by __dlpack__ (as JAX arrays are)."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, stream=None):
        return self._t.__dlpack__()


@pytest.mark.parametrize("wrap", [OnlyCAI, OnlyDLPack])
def test_arrays_from_other_frameworks_on_the_gpu(wrap):
    src = torch.randn(32, 48, device="cuda").half()
    dst = poisoned((32, 16), torch.float16)
    tiletune.copy_(wrap(dst), wrap(src[:, 8:24].contiguous()))
    torch.cuda.synchronize()
    assert torch.equal(dst, src[:, 8:24])
    x = torch.randn(1, 3, 10, 10, device="cuda")
    out = poisoned((1, 27, 100), torch.float32)
    tiletune.im2col(wrap(x), 3, padding=1, layout="nchw", out=wrap(out))
    torch.cuda.synchronize()
    assert torch.equal(out, F.unfold(x, 3, padding=1))


def test_batch_copy_blocks_and_regions():
    torch.manual_seed(0)
    # Paged-KV blocks by a block mapping, as vLLM keeps them.
    src = torch.randn(256, 16, 8, 128, device="cuda", dtype=torch.float16)
    dst = torch.zeros(300, 16, 8, 128, device="cuda", dtype=torch.float16)
    mapping = torch.stack([torch.randint(0, 256, (100,)), torch.randperm(300)[:100]], 1).cuda()
    expected = dst.clone()
    expected[mapping[:, 1]] = src[mapping[:, 0]]
    assert tiletune.batch_copy(dst, src, mapping) is dst
    torch.cuda.synchronize()
    assert torch.equal(dst, expected)
    # Regions of any size at any element offset, in distinct destination slots.
    item = 4096
    flat_src = torch.randn(64 * item, device="cuda", dtype=torch.float32)
    flat_dst = torch.zeros(64 * item, device="cuda", dtype=torch.float32)
    rows, expected = [], flat_dst.clone()
    for i, slot in enumerate(torch.randperm(64)[:40].tolist()):
        n = 1 + (i * 977) % item
        at = slot * item + (i * 13) % (item - n + 1)
        start = (i * 7919) % (64 * item - n)
        rows.append((start, at, n))
        expected[at:at + n] = flat_src[start:start + n]
    table = torch.tensor(rows, dtype=torch.int64, device="cuda")
    tiletune.batch_copy(flat_dst, flat_src, table, regions=True, item=item)
    torch.cuda.synchronize()
    assert torch.equal(flat_dst, expected)


def test_direct_calls_and_the_dispatcher_agree():
    # Plain tensors skip the custom op's dispatcher; a dispatch mode, FakeTensors, autograd
    # and torch.compile go through torch.ops.tiletune. Both give the same bits.
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(2, 5, 12, 10, device="cuda", dtype=torch.bfloat16)
    cols = torch.randn(2, 5 * 9, 12 * 10, device="cuda", dtype=torch.float32)
    direct_u = ttt.unfold(x, 3, padding=1)
    direct_f = ttt.fold(cols, (12, 10), 3, padding=1)
    with Seen() as seen:
        via_u = ttt.unfold(x, 3, padding=1)
        via_f = ttt.fold(cols, (12, 10), 3, padding=1)
    assert any("tiletune.unfold" in op for op in seen.ops), seen.ops
    assert any("tiletune.fold" in op for op in seen.ops), seen.ops
    assert torch.equal(direct_u, via_u) and torch.equal(direct_u, F.unfold(x, 3, padding=1))
    assert torch.equal(direct_f.view(torch.int32), via_f.view(torch.int32))
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x)
        out = ttt.unfold(fake, 3, padding=1)
        assert out.shape == (2, 45, 120) and type(out) is not torch.Tensor
    nhwc = torch.randn(1, 6, 6, 4, device="cuda", requires_grad=True)
    ttt.im2col(nhwc, 3, padding=1).sum().backward()  # autograd: through the custom op
    assert nhwc.grad is not None
    dst = torch.zeros(4, 8, device="cuda")
    src = torch.randn(8, 8, device="cuda")[::2]
    assert ttt.copy_(dst, src) is dst and torch.equal(dst, src)


def test_direct_copy_keeps_autograd_and_tracing_honest():
    # A direct copy_ bumps dst's version counter, so a backward that saved dst's old values
    # is refused, as it is through the op; torch.jit.trace records the op, not a launch.
    w = torch.randn(4, 8, device="cuda", requires_grad=True)
    dst = torch.randn(4, 8, device="cuda")
    y = (w * dst).sum()
    before = dst._version
    ttt.copy_(dst, torch.randn(4, 8, device="cuda"))
    assert dst._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    x = torch.randn(1, 2, 6, 6, device="cuda")
    traced = torch.jit.trace(lambda t: ttt.unfold(t, 3, padding=1), (x,))
    assert "tiletune::unfold" in str(traced.graph)
    x2 = torch.randn_like(x)
    assert torch.equal(traced(x2), F.unfold(x2, 3, padding=1))
