"""The whiteboard grader: checks the user's own attention code against reference kernels.

Importing this package is cheap and torch-free; torch is imported only in the judge and user-side children.
"""

from drill.grade.report import Check, Diagnosis, Report
from drill.grade.run import grade_file

__all__ = ["Check", "Diagnosis", "Report", "grade_file"]
