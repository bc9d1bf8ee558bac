from itertools import chain


def schedule_1f1b(n_stages, n_microbatches):
    def stage(s):
        warm = n_microbatches
        steady = chain.from_iterable((("F", warm + k), ("B", k)) for k in range(n_microbatches - warm))
        return [*(("F", k) for k in range(warm)), *steady, *(("B", k) for k in range(n_microbatches - warm, n_microbatches))]

    return [stage(s) for s in range(n_stages)]
