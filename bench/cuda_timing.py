"""Timing of GPU work with CUDA events, shared by the Python benchmarks."""
import statistics


def time_ms(fn, args_list, batches=9, calls=8):
    """Median milliseconds per call of fn(*args), rotating over args_list: a warm-up over
    every entry, then `batches` batches of `calls` calls, each batch timed with CUDA events."""
    import torch

    for args in args_list:
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            fn(*args_list[i % len(args_list)])
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / calls)
    return statistics.median(times)
