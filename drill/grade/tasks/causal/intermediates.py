"""What ``drill grade --trace`` compares the user's causal module against, step by step (from its own weights)."""

from drill.grade.tasks.causal.task import TASK
from drill.grade.tracing import attention_module_case, module_leaks


def case(ctx):
    return attention_module_case(TASK, ctx, mask_arg=False)


def stress(ctx, failed):
    """Scores around 1e3 when the large-logits check failed: an exp without the max subtracted overflows there."""
    return [attention_module_case(TASK, ctx, mask_arg=False, large=True)] if "stability.large-logits" in failed else []


def leaks(ctx, failed):
    return module_leaks(TASK, ctx, failed, mask_arg=False)
