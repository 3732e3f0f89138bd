#!/usr/bin/env python3
"""tiletune from PyTorch against PyTorch's own operators, in the same run.

  python3 bench/torch_benchmark.py [--quick] [--json out.json]

Run on the GPU machine, with the tiletune wheel installed (or on PYTHONPATH). Each row
times both sides on the same data with CUDA events: a warm-up over every buffer set, then
the median of 9 batches of 8 calls, the calls rotating over buffer sets that together
exceed twice the L2 (so no call finds its input in L2 from the previous one). Before
timing, each row checks that both sides give the same result (unfold and copies bit for
bit; fold bit for bit as well, its taps summed in F.fold's order). unfold and fold rows
are also timed replayed from a CUDA graph of calls over every buffer set ("graph"
columns): GPU time alone, with no host time between kernels, as a captured model runs
them; the first columns time what a Python loop issues, where a short kernel waits on its
call's host time.

Rows:
  unfold   tiletune.torch.unfold vs F.unfold, NCHW, batch 32
  fold     tiletune.torch.fold vs F.fold
  im2col   tiletune.im2col of the NHWC image vs F.unfold of the NCHW one (the layout a
           channels-last network holds)
  slice    tiletune.copy_(dst, src[:, a:b]) vs dst.copy_(src[:, a:b]): rows of 64 B to 64 KiB
           at odd pitches and offsets
  narrow   the same for rows of 3 to 12 B at pitches up to twice the row (RGBA to RGB,
           channels un-padded)
  dense    tiletune.copy_ vs dst.copy_ of contiguous tensors
GB/s counts the bytes each operator must move: input read plus output written (for
unfold: the image once and the column matrix; for a copy: the region twice). The last
table is the host time of a call with a warm plan: tiletune.copy_ from Python, and the
C entry point tt_plan_execute called in a loop through ctypes (the C++ Execute plus
ctypes' own cost), each averaged over 20000 back-to-back launches of a 4 KiB copy.
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import tiletune
import tiletune.torch as ttt
from cuda_timing import graph_ms, time_ms

L2_BYTES = 60 << 20  # H200; only sets the rotation depth

# name, C, H, W, kernel, stride, padding (dilation 1), at batch 32.
CONV_LAYERS = [
    ("resnet50_conv2_3x3", 64, 56, 56, 3, 1, 1),
    ("resnet50_conv3_3x3", 128, 28, 28, 3, 1, 1),
    ("resnet50_conv4_3x3", 256, 14, 14, 3, 1, 1),
    ("resnet50_conv5_3x3", 512, 7, 7, 3, 1, 1),
    ("resnet50_stem_7x7_s2", 3, 224, 224, 7, 2, 3),
    ("vit_b16_patchify", 3, 224, 224, 16, 16, 0),
    ("vit_h14_patchify", 3, 224, 224, 14, 14, 0),
    ("unet_enc_3x3_128", 64, 128, 128, 3, 1, 1),
    ("unet_up_k4_s2_p1", 64, 64, 64, 4, 2, 1),
    ("unet_up_k2_s2", 128, 32, 32, 2, 2, 0),
]
BATCH = 32
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def out_size(size, k, s, p):
    return (size + 2 * p - (k - 1) - 1) // s + 1


def sets_for(nbytes):
    return max(2, min(16, -(-2 * L2_BYTES // max(nbytes, 1)) + 1))


def same(a, b):
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8),
                                              b.contiguous().view(torch.uint8))


def row(op, layer, dtype, nbytes, ours_ms, theirs_ms, exact, theirs_name, graph=None):
    """One table row; `graph` is (ours, theirs) milliseconds per call replayed from a CUDA
    graph (GPU time alone), where measured."""
    r = {"op": op, "layer": layer, "dtype": dtype, "bytes": nbytes,
         "tiletune_gbps": nbytes / ours_ms / 1e6, "torch_gbps": nbytes / theirs_ms / 1e6,
         "speedup": theirs_ms / ours_ms, "exact": exact, "baseline": theirs_name}
    if graph is not None:
        r["graph_tiletune_gbps"] = nbytes / graph[0] / 1e6
        r["graph_speedup"] = graph[1] / graph[0]
    return r


def conv_rows(layers, dtypes):
    rows = []
    for name, c, h, w, k, s, p in layers:
        oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
        for dname in dtypes:
            dtype = DTYPES[dname]
            e = torch.finfo(dtype).bits // 8
            img_bytes = BATCH * c * h * w * e
            col_bytes = BATCH * c * k * k * oh * ow * e
            nbytes = img_bytes + col_bytes
            sets = sets_for(nbytes)
            # unfold: NCHW images; im2col: the same images channels-last.
            images = [torch.randn(BATCH, c, h, w, device="cuda").to(dtype) for _ in range(sets)]
            theirs = F.unfold(images[0], k, padding=p, stride=s)
            ours = ttt.unfold(images[0], k, padding=p, stride=s)
            exact = same(ours, theirs)
            del ours, theirs
            ours_fn = lambda x: ttt.unfold(x, k, padding=p, stride=s)
            theirs_fn = lambda x: F.unfold(x, k, padding=p, stride=s)
            args = [(x,) for x in images]
            t_ours, t_theirs = time_ms(ours_fn, args), time_ms(theirs_fn, args)
            graph = (graph_ms(ours_fn, args), graph_ms(theirs_fn, args))
            rows.append(row("unfold", name, dname, nbytes, t_ours, t_theirs, exact, "F.unfold",
                            graph))
            nhwc = [x.permute(0, 2, 3, 1).contiguous() for x in images]
            outs = [torch.empty(BATCH * oh * ow, k * k * c, device="cuda", dtype=dtype)
                    for _ in range(sets)]
            t_nhwc = time_ms(lambda x, o: tiletune.im2col(x, k, stride=s, padding=p, out=o),
                             list(zip(nhwc, outs)))
            rows.append(row("im2col", name, dname, nbytes, t_nhwc, t_theirs, True,
                            "F.unfold (NCHW)"))
            del images, nhwc, outs
            torch.cuda.empty_cache()
            cols = [torch.randn(BATCH, c * k * k, oh * ow, device="cuda").to(dtype)
                    for _ in range(sets)]
            theirs = F.fold(cols[0], (h, w), k, padding=p, stride=s)
            ours = ttt.fold(cols[0], (h, w), k, padding=p, stride=s)
            exact = same(ours, theirs)
            del ours, theirs
            ours_fn = lambda x: ttt.fold(x, (h, w), k, padding=p, stride=s)
            theirs_fn = lambda x: F.fold(x, (h, w), k, padding=p, stride=s)
            args = [(x,) for x in cols]
            t_ours, t_theirs = time_ms(ours_fn, args), time_ms(theirs_fn, args)
            graph = (graph_ms(ours_fn, args), graph_ms(theirs_fn, args))
            rows.append(row("fold", name, dname, nbytes, t_ours, t_theirs, exact, "F.fold",
                            graph))
            del cols
            torch.cuda.empty_cache()
    return rows


def copy_rows(quick):
    rows = []
    # (row bytes, pitch elements beyond the row, offset elements): f16 slices of ~128 MiB.
    shapes = [(64, 5, 3), (200, 11, 1), (1024, 7, 5), (4096, 13, 9), (65536, 3, 7)]
    if quick:
        shapes = shapes[::2]
    for row_bytes, extra, offset in shapes:
        width = row_bytes // 2
        rows_n = max(1, (128 << 20) // row_bytes)
        pitch = width + extra + offset
        sets = sets_for(2 * rows_n * row_bytes)
        srcs = [torch.randn(rows_n, pitch, device="cuda").half() for _ in range(sets)]
        dsts = [torch.empty(rows_n, width, device="cuda", dtype=torch.float16) for _ in range(sets)]
        args = [(d, s[:, offset:offset + width]) for d, s in zip(dsts, srcs)]
        tiletune.copy_(*args[0])
        exact = same(args[0][0], args[0][1])
        t_ours = time_ms(lambda d, s: tiletune.copy_(d, s), args)
        t_theirs = time_ms(lambda d, s: d.copy_(s), args)
        name = f"rows_{row_bytes}B_pitch_{2 * pitch}B_off_{2 * offset}B"
        rows.append(row("slice", name, "f16", 2 * rows_n * row_bytes, t_ours, t_theirs, exact,
                        "dst.copy_(src)"))
        del srcs, dsts, args
        torch.cuda.empty_cache()
    # Rows narrower than 16 B (the span form): (dtype, pixels, channels kept of a pitch, first).
    narrow = [(torch.uint8, 16 << 20, 3, 4, 0), (torch.float16, 8 << 20, 6, 8, 0),
              (torch.float32, 4 << 20, 3, 4, 1), (torch.uint8, 8 << 20, 5, 9, 2)]
    if quick:
        narrow = narrow[:2]
    for dtype, n, keep, pitch, first in narrow:
        element = torch.empty(0, dtype=dtype).element_size()
        sets = sets_for(n * (pitch + keep) * element)
        srcs = [torch.randint(0, 255, (n, pitch), device="cuda", dtype=torch.uint8).to(dtype)
                for _ in range(sets)]
        dsts = [torch.empty(n, keep, device="cuda", dtype=dtype) for _ in range(sets)]
        args = [(d, s[:, first:first + keep]) for d, s in zip(dsts, srcs)]
        tiletune.copy_(*args[0])
        exact = same(args[0][0], args[0][1])
        t_ours = time_ms(lambda d, s: tiletune.copy_(d, s), args)
        t_theirs = time_ms(lambda d, s: d.copy_(s), args)
        name = f"rows_{keep * element}B_pitch_{pitch * element}B_off_{first * element}B"
        dname = {torch.uint8: "u8", torch.float16: "f16", torch.float32: "f32"}[dtype]
        rows.append(row("narrow", name, dname, 2 * n * keep * element, t_ours, t_theirs, exact,
                        "dst.copy_(src)"))
        del srcs, dsts, args
        torch.cuda.empty_cache()
    for mib in ([64, 1024] if quick else [4, 64, 256, 1024]):
        n = (mib << 20) // 2
        sets = sets_for(2 * n * 2)
        srcs = [torch.randn(n, device="cuda").half() for _ in range(sets)]
        dsts = [torch.empty(n, device="cuda", dtype=torch.float16) for _ in range(sets)]
        args = list(zip(dsts, srcs))
        tiletune.copy_(*args[0])
        exact = same(args[0][0], args[0][1])
        t_ours = time_ms(lambda d, s: tiletune.copy_(d, s), args)
        t_theirs = time_ms(lambda d, s: d.copy_(s), args)
        rows.append(row("dense", f"{mib}MiB", "f16", 2 * n * 2, t_ours, t_theirs, exact,
                        "dst.copy_(src)"))
        del srcs, dsts, args
        torch.cuda.empty_cache()
    return rows


def overhead_us():
    src = torch.randn(2048, device="cuda").half()
    dst = torch.empty_like(src)
    tiletune.copy_(dst, src)  # the plan, warm
    torch.cuda.synchronize()
    calls = 20000
    start = time.perf_counter()
    for _ in range(calls):
        tiletune.copy_(dst, src)
    python_us = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    call = tiletune._prepare_copy(dst, src)
    plan = tiletune._plan(call.kind, call.desc, call.key)
    execute = tiletune._lib.tt_plan_execute
    handle, inp, out = plan.handle, call.input[1], call.output[1]
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    start = time.perf_counter()
    for _ in range(calls):
        execute(handle, inp, out, stream)
    c_us = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        dst.copy_(src)
    torch_us = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    # unfold and fold: the public calls (plain tensors skip the dispatcher), the registered
    # custom ops through torch's dispatcher, and PyTorch's own, on a layer small enough that
    # each kernel takes less time than its launch (a longer one would time the GPU).
    x = torch.randn(1, 2, 8, 8, device="cuda").half()
    cols = F.unfold(x, 3, padding=1)
    conv = {
        "unfold_us": lambda: ttt.unfold(x, 3, padding=1),
        "unfold_dispatcher_us": lambda: torch.ops.tiletune.unfold(x, [3, 3], [1, 1], [1, 1],
                                                                 [1, 1]),
        "F_unfold_us": lambda: F.unfold(x, 3, padding=1),
        "fold_us": lambda: ttt.fold(cols, (8, 8), 3, padding=1),
        "fold_dispatcher_us": lambda: torch.ops.tiletune.fold(cols, [8, 8], [3, 3], [1, 1],
                                                             [1, 1], [1, 1]),
        "F_fold_us": lambda: F.fold(cols, (8, 8), 3, padding=1),
    }
    host = {}
    for name, fn in conv.items():
        fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls // 4):
            fn()
        host[name] = (time.perf_counter() - start) / (calls // 4) * 1e6
        torch.cuda.synchronize()
    return {"python_call_us": python_us, "c_execute_us": c_us, "torch_copy_us": torch_us,
            "python_over_c_us": python_us - c_us, **host}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="f16 only, fewer copy shapes")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_benchmark: no CUDA GPU", file=sys.stderr)
        return 2
    dtypes = ["f16"] if args.quick else list(DTYPES)
    rows = conv_rows(CONV_LAYERS, dtypes) + copy_rows(args.quick)
    over = overhead_us()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {tiletune.version()}, "
          f"batch {BATCH}")
    print(f"{'op':7s} {'layer':34s} {'dtype':5s} {'tiletune GB/s':>13s} {'torch GB/s':>10s} "
          f"{'x torch':>8s} {'graph GB/s':>10s} {'graph x':>8s}  exact  baseline")
    for r in rows:
        graph = (f"{r['graph_tiletune_gbps']:10.0f} {r['graph_speedup']:8.2f}"
                 if "graph_speedup" in r else f"{'-':>10s} {'-':>8s}")
        print(f"{r['op']:7s} {r['layer']:34s} {r['dtype']:5s} {r['tiletune_gbps']:13.0f} "
              f"{r['torch_gbps']:10.0f} {r['speedup']:8.2f} {graph}  "
              f"{'yes' if r['exact'] else 'NO ':5s}  {r['baseline']}")
    for op in ("unfold", "fold", "im2col", "slice", "narrow", "dense"):
        ratios = [r["speedup"] for r in rows if r["op"] == op]
        if ratios:
            print(f"# {op}: x torch min {min(ratios):.2f}, geomean "
                  f"{statistics.geometric_mean(ratios):.2f}, max {max(ratios):.2f}")
        graphs = [r["graph_speedup"] for r in rows if r["op"] == op and "graph_speedup" in r]
        if graphs:
            print(f"# {op}, replayed from CUDA graphs (GPU time alone): x torch min "
                  f"{min(graphs):.2f}, geomean {statistics.geometric_mean(graphs):.2f}, max "
                  f"{max(graphs):.2f}")
    print(f"# host time per call, warm plan: tiletune.copy_ {over['python_call_us']:.2f} us, "
          f"tt_plan_execute via ctypes {over['c_execute_us']:.2f} us (Python above it: "
          f"{over['python_over_c_us']:.2f} us), torch dst.copy_ {over['torch_copy_us']:.2f} us")
    print(f"# host time per call: tiletune.torch.unfold {over['unfold_us']:.1f} us "
          f"({over['unfold_us'] - over['c_execute_us']:.1f} above tt_plan_execute; through the "
          f"dispatcher {over['unfold_dispatcher_us']:.1f}), F.unfold {over['F_unfold_us']:.1f}; "
          f"fold {over['fold_us']:.1f} us ({over['fold_us'] - over['c_execute_us']:.1f} above; "
          f"through the dispatcher {over['fold_dispatcher_us']:.1f}), F.fold "
          f"{over['F_fold_us']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "overhead": over}, f, indent=1)
    return 0 if all(r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
