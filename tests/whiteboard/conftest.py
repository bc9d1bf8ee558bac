"""A test that calls run_battery makes this process the judge: give it one intra-op thread, as drill's
own judge has (the grader's tensors are tiny; on a busy 2-core machine more threads only spin)."""

try:
    import torch
except ImportError:  # the torch-free tests here (catalog, watcher) still run
    pass
else:
    torch.set_num_threads(1)
