"""What ``drill grade --trace`` compares the user's causal module against, step by step (from its own weights)."""

from drill.grade.tasks.causal.task import TASK
from drill.grade.tracing import attention_module_case, module_leaks


def case(ctx):
    return attention_module_case(TASK, ctx, mask_arg=False)


def leaks(ctx, failed):
    return module_leaks(TASK, ctx, failed, mask_arg=False)
