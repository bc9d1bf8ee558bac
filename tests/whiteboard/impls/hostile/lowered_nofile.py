"""Lowers RLIMIT_NOFILE to 0 and returns a wrong answer: every file drill's
user side opens afterwards (a module it imports to trace the call, a line for a message) is refused."""
import os
import resource


def scaled_dot_product_attention(q, k, v, mask=None):
    resource.setrlimit(resource.RLIMIT_NOFILE, (0, 0))
    return q
