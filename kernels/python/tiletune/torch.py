"""tiletune's operators as PyTorch operators: torch.ops.tiletune.im2col, col2im and copy_,
registered with torch.library.custom_op. Each has a fake (meta) implementation, so it
traces under torch.compile and in FakeTensor mode; im2col and col2im are each other's
gradient (they are adjoints), so autograd works through them.

    import tiletune.torch  # registers the operators
    cols = torch.ops.tiletune.im2col(x_nhwc, [3, 3], [1, 1], [1, 1], [1, 1])

Layouts of im2col and col2im are tiletune's: an NHWC image [N, H, W, C] and its column
matrix [N*OH*OW, KH*KW*C] (taps kh, kw, then channels). unfold and fold (ops
tiletune::unfold, tiletune::fold) take F.unfold's and F.fold's signatures and layouts, NCHW
and [N, C*KH*KW, OH*OW], and return their results: unfold bit for bit, fold summing each
pixel's taps in F.fold's order in f32 (so its bits too, for finite data).

    cols = tiletune.torch.unfold(x, kernel_size=3, padding=1)   # == F.unfold(x, 3, padding=1)
"""
from typing import List, Sequence

import torch

import tiletune as _tt

__all__ = ["im2col", "col2im", "copy_", "unfold", "fold"]


_out_size = _tt._out_size  # the output extent of a window sweep, as the package computes it

@torch.library.custom_op("tiletune::im2col", mutates_args=())
def _im2col(x: torch.Tensor, kernel_size: List[int], stride: List[int], dilation: List[int],
            padding: List[int]) -> torch.Tensor:
    return _tt.im2col(x.contiguous(), tuple(kernel_size), tuple(stride), tuple(dilation),
                      tuple(padding))


@_im2col.register_fake
def _(x, kernel_size, stride, dilation, padding):
    n, h, w, c = x.shape
    oh = _out_size(h, kernel_size[0], stride[0], dilation[0], padding[0])
    ow = _out_size(w, kernel_size[1], stride[1], dilation[1], padding[1])
    return x.new_empty((n * oh * ow, kernel_size[0] * kernel_size[1] * c))


@torch.library.custom_op("tiletune::col2im", mutates_args=())
def _col2im(cols: torch.Tensor, output_size: List[int], kernel_size: List[int],
            stride: List[int], dilation: List[int], padding: List[int]) -> torch.Tensor:
    return _tt.col2im(cols.contiguous(), tuple(output_size), tuple(kernel_size), tuple(stride),
                      tuple(dilation), tuple(padding))


@_col2im.register_fake
def _(cols, output_size, kernel_size, stride, dilation, padding):
    h, w = output_size
    oh = _out_size(h, kernel_size[0], stride[0], dilation[0], padding[0])
    ow = _out_size(w, kernel_size[1], stride[1], dilation[1], padding[1])
    c = cols.shape[1] // (kernel_size[0] * kernel_size[1])
    return cols.new_empty((cols.shape[0] // (oh * ow), h, w, c))


def _im2col_setup(ctx, inputs, output):
    x, kernel_size, stride, dilation, padding = inputs
    ctx.geometry = ([x.shape[1], x.shape[2]], kernel_size, stride, dilation, padding)


def _im2col_backward(ctx, grad):
    return _col2im(grad.contiguous(), *ctx.geometry), None, None, None, None


def _col2im_setup(ctx, inputs, output):
    _, _, kernel_size, stride, dilation, padding = inputs
    ctx.geometry = (kernel_size, stride, dilation, padding)


def _col2im_backward(ctx, grad):
    return _im2col(grad.contiguous(), *ctx.geometry), None, None, None, None, None


_im2col.register_autograd(_im2col_backward, setup_context=_im2col_setup)
_col2im.register_autograd(_col2im_backward, setup_context=_col2im_setup)


@torch.library.custom_op("tiletune::copy_", mutates_args=("dst",))
def _copy_(dst: torch.Tensor, src: torch.Tensor) -> None:
    _tt.copy_(dst, src)


@_copy_.register_fake
def _(dst, src):
    return None


@torch.library.custom_op("tiletune::unfold", mutates_args=())
def _unfold(x: torch.Tensor, kernel_size: List[int], dilation: List[int], padding: List[int],
            stride: List[int]) -> torch.Tensor:
    return _tt.im2col(x.contiguous(), tuple(kernel_size), tuple(stride), tuple(dilation),
                      tuple(padding), layout="nchw")


@_unfold.register_fake
def _(x, kernel_size, dilation, padding, stride):
    n, c, h, w = x.shape
    oh = _out_size(h, kernel_size[0], stride[0], dilation[0], padding[0])
    ow = _out_size(w, kernel_size[1], stride[1], dilation[1], padding[1])
    return x.new_empty((n, c * kernel_size[0] * kernel_size[1], oh * ow))


@torch.library.custom_op("tiletune::fold", mutates_args=())
def _fold(cols: torch.Tensor, output_size: List[int], kernel_size: List[int],
          dilation: List[int], padding: List[int], stride: List[int]) -> torch.Tensor:
    return _tt.col2im(cols.contiguous(), tuple(output_size), tuple(kernel_size), tuple(stride),
                      tuple(dilation), tuple(padding), layout="nchw")


@_fold.register_fake
def _(cols, output_size, kernel_size, dilation, padding, stride):
    n, rows, _ = cols.shape
    return cols.new_empty((n, rows // (kernel_size[0] * kernel_size[1]), output_size[0],
                           output_size[1]))


def _unfold_setup(ctx, inputs, output):
    x, kernel_size, dilation, padding, stride = inputs
    ctx.geometry = ([x.shape[2], x.shape[3]], kernel_size, dilation, padding, stride)


def _unfold_backward(ctx, grad):
    return _fold(grad.contiguous(), *ctx.geometry), None, None, None, None


def _fold_setup(ctx, inputs, output):
    _, _, kernel_size, dilation, padding, stride = inputs
    ctx.geometry = (kernel_size, dilation, padding, stride)


def _fold_backward(ctx, grad):
    return _unfold(grad.contiguous(), *ctx.geometry), None, None, None, None, None


_unfold.register_autograd(_unfold_backward, setup_context=_unfold_setup)
_fold.register_autograd(_fold_backward, setup_context=_fold_setup)


def _list(value):
    return [value, value] if isinstance(value, int) else [int(v) for v in value]


def _direct(*tensors):
    """True where a call can skip the custom op's dispatcher and run the package's call
    itself: plain CUDA tensors, outside torch.compile's tracing and any dispatch mode
    (FakeTensor, functionalisation, a user's mode), with nothing for autograd to record.
    The dispatcher costs tens of microseconds of host time a call, longer than many of these
    kernels run; everywhere else the call goes through torch.ops.tiletune, as registered."""
    if (_is_compiling() or _is_tracing() or _dispatch_mode() is not None
            or _forward_ad_level() >= 0):
        return False
    grad = _grad_enabled()
    for t in tensors:
        if type(t) is not torch.Tensor or not t.is_cuda or (grad and t.requires_grad):
            return False
        if _is_wrapped(t):
            return False
    return True


try:
    from torch.utils._python_dispatch import _get_current_dispatch_mode as _dispatch_mode
except ImportError:  # pragma: no cover - older PyTorch
    def _dispatch_mode():
        return None

def _forward_ad_level():
    """The innermost forward-mode AD level in effect, -1 outside any (dual tensors carry
    tangents only the dispatcher path refuses)."""
    return getattr(_forward_ad, "_current_level", -1)


# Bound once: each call of _direct reads them.
_forward_ad = torch.autograd.forward_ad
_is_compiling = torch.compiler.is_compiling
_is_tracing = torch.jit.is_tracing
_grad_enabled = torch.is_grad_enabled


# The version counter a write through the custom op bumps (autograd then refuses a backward
# that saved the old values).
_bump_version = getattr(torch.autograd.graph, "increment_version", None)


try:
    _is_wrapped = torch._C._functorch.is_functorch_wrapped_tensor  # vmap and grad transforms
except AttributeError:  # pragma: no cover - older PyTorch
    def _is_wrapped(t):
        return False


def im2col(x: torch.Tensor, kernel_size, stride=1, dilation=1, padding=0) -> torch.Tensor:
    """torch.ops.tiletune.im2col with int-or-pair arguments."""
    if _direct(x):
        return _tt.im2col(x.contiguous(), kernel_size, stride, dilation, padding)
    return torch.ops.tiletune.im2col(x, _list(kernel_size), _list(stride), _list(dilation),
                                     _list(padding))


def col2im(cols: torch.Tensor, output_size: Sequence[int], kernel_size, stride=1, dilation=1,
           padding=0) -> torch.Tensor:
    """torch.ops.tiletune.col2im with int-or-pair arguments."""
    if _direct(cols):
        return _tt.col2im(cols.contiguous(), output_size, kernel_size, stride, dilation, padding)
    return torch.ops.tiletune.col2im(cols, _list(output_size), _list(kernel_size),
                                     _list(stride), _list(dilation), _list(padding))


def copy_(dst: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """torch.ops.tiletune.copy_: dst[...] = src; returns dst."""
    # Written directly, dst's version counter is bumped as the op would; an inference tensor
    # (no counter) is written directly only in inference mode, where the op allows it too.
    inference = dst.is_inference()
    if (_direct(dst, src) and _bump_version is not None
            and (not inference or torch.is_inference_mode_enabled())):
        _tt.copy_(dst, src)
        if not inference:
            _bump_version(dst)
        return dst
    torch.ops.tiletune.copy_(dst, src)
    return dst


def unfold(input: torch.Tensor, kernel_size, dilation=1, padding=0, stride=1) -> torch.Tensor:
    """F.unfold, through tiletune: input [N, C, H, W] (or unbatched [C, H, W]) to
    [N, C*KH*KW, OH*OW] (or [C*KH*KW, OH*OW]), bit for bit F.unfold's result."""
    if input.dim() not in (3, 4):
        raise ValueError(f"unfold: input of shape {tuple(input.shape)}; F.unfold takes "
                         "[N, C, H, W] or unbatched [C, H, W]")
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    if _direct(batched):
        out = _tt.im2col(batched.contiguous(), kernel_size, stride, dilation, padding,
                         layout="nchw")
    else:
        out = torch.ops.tiletune.unfold(batched, _list(kernel_size), _list(dilation),
                                        _list(padding), _list(stride))
    return out if input.dim() == 4 else out.squeeze(0)


def fold(input: torch.Tensor, output_size, kernel_size, dilation=1, padding=0,
         stride=1) -> torch.Tensor:
    """F.fold, through tiletune: input [N, C*KH*KW, L] (or unbatched [C*KH*KW, L]) summed
    into [N, C, H, W] (or [C, H, W]), each pixel's taps in F.fold's order with f32 sums;
    f32, f16 and bf16."""
    if input.dim() not in (2, 3):
        raise ValueError(f"fold: input of shape {tuple(input.shape)}; F.fold takes "
                         "[N, C*KH*KW, L] or unbatched [C*KH*KW, L]")
    batched = input if input.dim() == 3 else input.unsqueeze(0)
    if _direct(batched):
        out = _tt.col2im(batched.contiguous(), output_size, kernel_size, stride, dilation,
                         padding, layout="nchw")
    else:
        out = torch.ops.tiletune.fold(batched, _list(output_size), _list(kernel_size),
                                      _list(dilation), _list(padding), _list(stride))
    return out if input.dim() == 3 else out.squeeze(0)
