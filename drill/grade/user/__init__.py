"""The user side of a grade: the only code that runs in the process that imports the user's file.

It imports torch and nothing of drill (its modules import each other relatively), so the
zygote can load it under a private package name while ``import drill`` stays refused there.
The judge imports ``wire``, ``procs`` and ``measure`` from here as ``drill.grade.user.*``.
"""
