#!/usr/bin/env python3
"""PyTorch F.fold on the col2im benchmark's layers, and the join with its results.

F.fold (nn.Fold) is col2im in NCHW: input [N, C*KH*KW, OH*OW], output [N, C, H, W]. It is
timed with CUDA events over rotated buffer sets spanning 150 MB, median of 9 batches of 8
calls after a warm-up, and reported with the benchmark's byte count: the column matrix
read plus the image written (f16).

  python3 bench/fold_baseline.py                     # F.fold alone, a table
  python3 bench/fold_baseline.py --join col2im.json  # with //bench:col2im_benchmark's
                                                     # --benchmark_out JSON: best variant
                                                     # per layer, vs F.fold, vs ceiling

Run on the GPU machine (PyTorch is installed there; tiletune never depends on it).
"""
import argparse
import json
import re
import sys

from cuda_timing import time_ms

LAYERS = [  # name, n, h, w, c, kernel, stride, pad: the same as bench/col2im_benchmark.cc
    ("n64_c64_56x56_k3_s1_p1", 64, 56, 56, 64, 3, 1, 1),
    ("n64_c256_14x14_k3_s1_p1", 64, 14, 14, 256, 3, 1, 1),
    ("n64_c128_56x56_k3_s2_p1", 64, 56, 56, 128, 3, 2, 1),
    ("n32_c3_224x224_k7_s2_p3", 32, 224, 224, 3, 7, 2, 3),
]


def out_size(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


def fold_gbps():
    import torch
    import torch.nn.functional as F

    results = {}
    for name, n, h, w, c, k, s, p in LAYERS:
        oh, ow = out_size(h, k, s, p), out_size(w, k, s, p)
        col_bytes = n * oh * ow * k * k * c * 2
        img_bytes = n * h * w * c * 2
        sets = max(2, min(8, 150 * 2**20 // (col_bytes + img_bytes) + 1))
        cols = [torch.randn(n, c * k * k, oh * ow, device="cuda", dtype=torch.float16)
                for _ in range(sets)]
        fold = lambda x: F.fold(x, output_size=(h, w), kernel_size=k, stride=s, padding=p)
        ms = time_ms(fold, [(x,) for x in cols])
        results[name] = (col_bytes + img_bytes) / ms / 1e6
        del cols
        torch.cuda.empty_cache()
    return results, torch.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--join", help="col2im_benchmark --benchmark_out JSON")
    args = parser.parse_args()
    fold, version = fold_gbps()
    if not args.join:
        print(f"F.fold, torch {version}")
        for name, gbps in fold.items():
            print(f"{name:28s} {gbps:8.0f} GB/s")
        return 0
    with open(args.join) as f:
        runs = json.load(f)["benchmarks"]
    best = {}
    for run in runs:
        if run.get("error_occurred") or "GBps" not in run:
            continue
        m = re.match(r"col2im_f16/([^/]+)/(.+)", run["name"])
        if not m:
            continue
        layer, variant = m.groups()
        if layer not in best or run["GBps"] > best[layer]["GBps"]:
            best[layer] = dict(run, variant=variant)
    print(f"torch {version}; F.fold and col2im_benchmark in the same device call")
    print(f"{'layer':28s} {'best variant':28s} {'GB/s':>7s} {'ceiling':>8s} {'of ceil':>8s}"
          f" {'F.fold':>7s} {'vs fold':>8s}")
    for name, *_ in LAYERS:
        if name not in best:
            print(f"{name:28s} (no result)")
            continue
        b = best[name]
        print(f"{name:28s} {b['variant']:28s} {b['GBps']:7.0f} {b['memcpy_GBps']:8.0f}"
              f" {b['vs_memcpy']:8.3f} {fold[name]:7.0f} {b['GBps'] / fold[name]:7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
