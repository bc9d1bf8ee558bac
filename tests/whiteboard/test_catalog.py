"""The catalog file, task statuses from the history, the polling watcher and the bench fit (no torch needed)."""

from __future__ import annotations

import json
import os
import re
import select
from datetime import datetime, timezone

import pytest
from typer.testing import CliRunner

from drill.history import store
from drill.cli import app
from drill.errors import DrillError
from drill.grade.benchfit import BenchResult, growth_label, loglog_slope
from drill.whiteboard import catalog, session
from drill.whiteboard.watch import FileWatcher

# Grouped by track (attention, positions, inference, building blocks), by level inside a track, then by id.
# The first ten tasks in catalog order (others may sit between them: the order is by track and level).
TEN = ["sdpa", "causal", "cross", "mha", "padding", "gqa", "rope", "kv_cache", "flash", "block"]
T0 = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)


def test_catalog_lists_every_task_with_three_bilingual_hints():
    exercises = catalog.load()
    assert [t for t in exercises if t in TEN] == TEN
    for e in exercises.values():
        assert e.level in ("L1", "L2", "L3") and set(e.title) == {"en", "zh"}
        assert all(set(h) == {"en", "zh"} for h in e.hints)
        assert "raise NotImplementedError" in e.template.read_text()


def test_titles_hints_and_diagnoses_are_written_in_both_languages():
    """A task's texts are content written side by side in both languages (task.yaml, codes.yaml): the Chinese holds
    Chinese, or is the same code as the English (a hint or a fix that is only code: code is not translated, and its
    semicolons stay the ones Python reads)."""
    from drill.diagnosis_codes import all_codes

    cjk = re.compile(r"[\u4e00-\u9fff]")
    pairs = [(f"{e.id} title", e.title["en"], e.title["zh"]) for e in catalog.load().values()]
    pairs += [(f"{e.id} hint {i + 1}", h["en"], h["zh"]) for e in catalog.load().values() for i, h in enumerate(e.hints)]
    pairs += [(name, *texts) for name, code in all_codes().items()
              for texts in ((code.message, code.message_zh), (code.fix, code.fix_zh))]  # fmt: skip
    assert len(pairs) > 700
    assert [where for where, en, zh in pairs if not en.strip() or cjk.search(en)] == []
    assert [(where, zh) for where, en, zh in pairs if not cjk.search(zh) and zh != en] == []


def test_catalog_refuses_another_format_version(tmp_path):
    (tmp_path / "sdpa").mkdir()
    (tmp_path / "sdpa" / "task.yaml").write_text("format_version: 2\n")
    with pytest.raises(DrillError, match="format_version"):
        catalog.load(tmp_path)


def test_catalog_orders_by_track_then_level():
    exercises = list(catalog.load().values())
    keys = [(catalog.TRACKS.index(e.track), e.level) for e in exercises]
    assert keys == sorted(keys)
    assert exercises[0].track == "attention" and exercises[0].level == "L1"


def test_tasks_json_reports_untried_failed_and_best_pass():
    conn = store.connect()
    for task, source, passed, seconds in [("mha", "grade", False, 2.0), ("sdpa", "whiteboard", False, 50.0),
                                          ("sdpa", "whiteboard", True, 300.0), ("sdpa", "whiteboard", True, 120.0)]:  # fmt: skip
        store.record_grade_run(conn, task=task, file="f.py", source=source, passed=passed, codes=[], seconds=seconds, now=T0)
    result = CliRunner().invoke(app, ["tasks", "--json"])
    assert result.exit_code == 0
    rows = {t["id"]: t for t in json.loads(result.stdout)}
    assert [t for t in rows if t in TEN] == TEN
    assert (rows["sdpa"]["status"], rows["sdpa"]["best_seconds"]) == ("passed", 120.0)
    assert rows["mha"]["status"] == "failed" and rows["causal"]["status"] == "untried"
    assert {"id", "track", "level", "title", "status"} <= set(rows["flash"])
    assert rows["flash"]["track"] == "inference" and rows["rope"]["track"] == "positions"


def test_prepare_resumes_an_existing_file(tmp_path):
    exercise = catalog.get("sdpa")
    path = tmp_path / "mine.py"
    assert session.prepare(exercise, path) is False
    path.write_text("# my work\n")
    assert session.prepare(exercise, path) is True
    assert path.read_text() == "# my work\n"


def test_watcher_fires_once_per_new_content(tmp_path):
    def wait(watcher):  # the watcher's thread signals its fd; 5 s is far above its ~50 ms debounce
        select.select([watcher.fileno()], [], [], 5.0)
        return watcher.changed()

    path = tmp_path / "f.py"
    path.write_text("a")
    with FileWatcher(path) as watcher:
        assert not watcher.changed()
        path.write_text("bb")
        assert wait(watcher) and not watcher.changed()
        tmp = tmp_path / "f.py.tmp"
        tmp.write_text("ccc")
        os.replace(tmp, path)  # an atomic save replaces the inode
        assert wait(watcher)
        os.utime(path, ns=(1, 1))  # a touch without new content
        assert not wait(watcher)
        (tmp_path / "other.py").write_text("x")  # another file in the folder
        path.unlink()
        assert not wait(watcher)


def test_loglog_slope_recovers_the_exponent():
    ts = [256, 512, 1024, 2048, 4096]
    assert loglog_slope(ts, [3 * t * t for t in ts]) == pytest.approx(2.0)
    assert loglog_slope(ts, [7 * t + 0.0 for t in ts]) == pytest.approx(1.0)
    assert growth_label(1.93) == "~T^2" and growth_label(1.04) == "~T" and growth_label(0.1) == "constant"


def test_bench_result_fits_each_contender():
    rows = [{"t": t, "contenders": {"yours": {"seconds": 1e-3, "peak_bytes": 16 * t * t},
                                    "reference": {"seconds": 2e-3, "peak_bytes": 32 * t * t},
                                    "torch": {"seconds": 5e-4, "peak_bytes": 1024 * t}}} for t in (256, 512, 1024)]  # fmt: skip
    result = BenchResult.from_wire({"task": "sdpa", "device": "cpu", "shape": "s", "memory_measure": "m", "rows": rows})
    data = result.to_json()
    assert data["memory_slope"]["yours"] == pytest.approx(2.0) and result.growth("torch") == "~T"
    assert data["rows"][0]["ratio_vs_reference"] == pytest.approx(0.5)


def test_every_hint_code_is_a_documented_diagnosis():
    from drill.diagnosis_codes import all_codes

    known = set(all_codes())
    mapped = {(e.id, code) for e in catalog.load().values() for codes in e.hint_codes for code in codes}
    assert ("sdpa", "scale-missing") in mapped
    assert [pair for pair in mapped if pair[1] not in known] == []
