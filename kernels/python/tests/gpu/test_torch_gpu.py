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
