"""Timing of GPU work with CUDA events, shared by the Python benchmarks."""
import statistics


def time_ms(fn, args_list, batches=9, calls=8):
    """Median milliseconds per call of fn(*args), rotating over args_list: a warm-up over
    every entry, then `batches` batches of `calls` calls, each batch timed with CUDA events."""
    import torch

    for args in args_list:
        fn(*args)
    torch.cuda.synchronize()

    def batch():
        for i in range(calls):
            fn(*args_list[i % len(args_list)])

    return _median_ms(batch, batches, calls)


def _median_ms(run, repeats, calls):
    """Median over `repeats` event-timed runs of run() (which makes `calls` calls) of the
    milliseconds per call."""
    import torch

    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / calls)
    return statistics.median(times)


def graph_ms(fn, args_list, replays=9, calls=None):
    """Median milliseconds per call of fn(*args) with no host time in it: `calls` calls
    (default: every entry of args_list once, at least 8), rotating over args_list, captured
    once in a CUDA graph, then the graph replayed `replays` times, each timed with CUDA
    events. time_ms times what a Python loop
    issues (a kernel shorter than its call's host time waits on the host); this times the
    GPU work alone, as a captured model (torch.compile's CUDA graphs) runs it."""
    import torch

    calls = calls or max(8, len(args_list))
    for args in args_list:
        fn(*args)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            fn(*args_list[i % len(args_list)])
    graph.replay()
    torch.cuda.synchronize()
    ms = _median_ms(graph.replay, replays, calls)
    del graph
    return ms
