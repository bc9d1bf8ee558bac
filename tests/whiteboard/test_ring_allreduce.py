"""ring_allreduce: the send log comes back from the user side with the result, and the judge reads pattern
and volume from it; a log the user's code rewrites is a finding, never a pass."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torch")

from drill.grade.tasks.ring_allreduce.task import RingVariant, reference  # noqa: E402

SERVER_THEN_TAMPER = '''def ring_allreduce(chunks_per_rank, comm):
    n = len(chunks_per_rank)
    total = [sum(chunks_per_rank[r][c] for r in range(n)) for c in range(n)]
    out = [[t.clone() for t in total] for _ in range(n)]
    comm.send(0, 1, total[0])
    comm._log[0, 1] = 2 * (n - 1)  # claims the ring's rounds
    return out
'''


def test_volumes_by_hand():
    chunks = [[torch.zeros(3, dtype=torch.float64) for _ in range(4)] for _ in range(4)]
    for variant, want in ((RingVariant(), [18, 18, 18, 18]), (RingVariant(pattern="server"), [36, 12, 12, 12])):
        _, sends = reference(chunks, variant)
        per_rank = [sum(numel for src, _, numel in sends if src == r) for r in range(4)]
        assert per_rank == want  # ring: 2(N-1) chunks of 3; server: rank 0 sends 3 ranks x 4 chunks x 3


def test_a_log_rewritten_by_the_users_code_fails(tmp_path):
    from drill.grade.battery import run_battery

    path = tmp_path / "tampered.py"
    path.write_text(SERVER_THEN_TAMPER)
    report = run_battery(path, task="ring_allreduce", device="cpu")
    assert not report.passed
    failed = [c for c in report.checks if c.status == "fail"]
    assert any("written by something other than comm.send" in c.message for c in failed)


def test_data_read_without_sending_fails_the_volume(tmp_path):
    from drill.grade.battery import run_battery

    path = tmp_path / "no_sends.py"
    path.write_text("def ring_allreduce(chunks_per_rank, comm):\n"
                    "    n = len(chunks_per_rank)\n"
                    "    return [[sum(chunks_per_rank[r][c] for r in range(n)) for c in range(n)] for _ in range(n)]\n")
    report = run_battery(path, task="ring_allreduce", device="cpu")
    status = {c.id: (c.status, c.message) for c in report.checks}
    assert status["numerical.base"][0] == "pass"
    assert status["numerical.volume"][0] == "fail" and "rank 0 sends 0 elements" in status["numerical.volume"][1]
    assert status["numerical.neighbours-and-rounds"][0] == "fail"
