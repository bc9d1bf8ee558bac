"""What ``drill grade --trace`` compares the user's mha module against, step by step (from its own weights)."""

from drill.grade.tasks.mha.task import TASK
from drill.grade.tracing import attention_module_case


def case(ctx):
    return attention_module_case(TASK, ctx, mask_arg=True)
