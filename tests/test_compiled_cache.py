"""The compiled YAML cache of the task catalog and the diagnosis codes: used while the files are unchanged, never trusted otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from drill import compiled, diagnosis_codes
from drill.errors import DrillError
from drill.whiteboard import catalog

parse_catalog = catalog.load.__wrapped__  # without the in-process cache: every call goes to the files or the entry
parse_codes = diagnosis_codes.all_codes.__wrapped__


@pytest.fixture
def tasks(tmp_path):
    """A copy of three bundled task folders."""
    root = tmp_path / "tasks"
    for task in ("sdpa", "mha", "rope"):
        shutil.copytree(catalog.FOLDER / task, root / task)
    return root


def entries(drill_home, name: str) -> list:
    return sorted((drill_home / "cache" / "yaml").glob(f"{name}-*.marshal"))


def refuse_parsing(monkeypatch):
    monkeypatch.setattr(yaml, "load", lambda *a, **k: pytest.fail("the YAML was parsed although the cache is fresh"))


def test_the_cached_catalog_equals_the_parsed_one_for_every_bundled_task(drill_home, monkeypatch):
    parsed = {}
    for path in catalog.FOLDER.glob("*/task.yaml"):
        exercise = catalog._exercise(path, yaml.safe_load(path.read_text(encoding="utf-8")))
        parsed[exercise.id] = exercise
    fresh = parse_catalog(catalog.FOLDER)  # a miss: parsed, then written
    assert fresh == parsed and entries(drill_home, "tasks")
    refuse_parsing(monkeypatch)
    cached = parse_catalog(catalog.FOLDER)
    assert cached == parsed and list(cached) == list(fresh)  # every task, in the catalog's order


def test_the_cached_codes_equal_the_parsed_ones(drill_home, monkeypatch):
    parsed = {}
    for path in diagnosis_codes.files():
        for name, entry in yaml.safe_load(path.read_text(encoding="utf-8"))["codes"].items():
            parsed[name] = (entry["en"], entry["fix_en"], entry["zh"], entry["fix_zh"], tuple(entry.get("questions") or ()))
    assert parse_codes() == parsed
    assert entries(drill_home, "codes")
    refuse_parsing(monkeypatch)
    assert parse_codes() == parsed


def test_an_edit_is_seen_even_with_the_old_size_and_mtime(tasks):
    assert parse_catalog(tasks)["mha"].title["en"] != "Renamed"
    path = tasks / "mha" / "task.yaml"
    text = path.read_text(encoding="utf-8")
    old = yaml.safe_load(text)["title"]["en"]
    new = ("Renamed" * 20)[: len(old)]
    stat = path.stat()
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert parse_catalog(tasks)["mha"].title["en"] == new


def test_a_task_added_or_removed_is_seen(tasks):
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "rope"}
    shutil.copytree(catalog.FOLDER / "gqa", tasks / "gqa")
    shutil.rmtree(tasks / "rope")
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "gqa"}


def test_a_corrupt_or_truncated_entry_is_a_miss_and_is_rewritten(tasks, drill_home, monkeypatch):
    expected = parse_catalog(tasks)
    (entry,) = entries(drill_home, "tasks")
    good = entry.read_bytes()
    for broken in (b"\x00garbage", good[: len(good) // 2], b"", b"\xe9" + good[1:]):
        entry.write_bytes(broken)
        assert parse_catalog(tasks) == expected
        assert entry.read_bytes() == good  # rewritten whole
    refuse_parsing(monkeypatch)
    assert parse_catalog(tasks) == expected


def test_an_entry_of_another_drill_version_is_a_miss(tasks, monkeypatch):
    parse_catalog(tasks)
    monkeypatch.setattr(compiled, "__version__", "99.0")
    parsed = []
    real_load = yaml.load
    monkeypatch.setattr(yaml, "load", lambda *a, **k: parsed.append(1) or real_load(*a, **k))
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "rope"}
    assert len(parsed) == 3


def test_an_unwritable_cache_folder_still_loads(tasks, drill_home):
    (drill_home / "cache").mkdir()
    (drill_home / "cache" / "yaml").write_text("not a folder\n")
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "rope"}
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "rope"}
    assert (drill_home / "cache" / "yaml").read_text() == "not a folder\n"


def test_an_unusable_data_folder_still_loads(tasks, tmp_path, monkeypatch):
    blocker = tmp_path / "home"
    blocker.write_text("my notes\n")
    monkeypatch.setenv("DRILL_HOME", str(blocker))
    with pytest.raises(DrillError):
        compiled.folder()
    assert set(parse_catalog(tasks)) == {"sdpa", "mha", "rope"}
    assert blocker.read_text() == "my notes\n"


def test_a_bad_task_is_refused_every_time_and_writes_no_entry(tasks, drill_home):
    (tasks / "mha" / "task.yaml").write_text("format_version: 2\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(DrillError, match="format_version"):
            parse_catalog(tasks)
    assert not entries(drill_home, "tasks")


def test_documents_marshal_cannot_store_are_parsed_every_time(tmp_path, drill_home):
    path = tmp_path / "dated.yaml"
    path.write_text("when: 2024-05-01\nitems: !!set {a, b}\n", encoding="utf-8")
    for _ in range(2):
        assert list(compiled.yaml_documents("dated", tmp_path, [path])) == [(path, yaml.safe_load(path.read_text()))]
    assert not entries(drill_home, "dated")


def test_crlf_and_anchors_load_as_pyyaml_reads_the_file(tmp_path, monkeypatch):
    path = tmp_path / "odd.yaml"
    path.write_bytes(b"base: &b {x: 1}\r\nuse: *b\r\ntext: |\r\n  two\r\n  lines\r\n")
    expected = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [doc for _, doc in compiled.yaml_documents("odd", tmp_path, [path])] == [expected]
    refuse_parsing(monkeypatch)
    (cached,) = [doc for _, doc in compiled.yaml_documents("odd", tmp_path, [path])]
    assert cached == expected and cached["text"] == "two\nlines\n"


PROBE = """
import json, sys
from drill import diagnosis_codes
from drill.whiteboard import catalog
counts = [len(catalog.load()), len(diagnosis_codes.all_codes())]
print(json.dumps([counts, "yaml" in sys.modules]))
"""


def test_a_warm_start_never_imports_pyyaml(drill_home):
    def run():
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60,
                              env={"DRILL_HOME": str(drill_home), "PATH": "/usr/bin:/bin"})  # fmt: skip
        return json.loads(done.stdout)

    cold_counts, cold_yaml = run()
    warm_counts, warm_yaml = run()
    assert cold_yaml and not warm_yaml
    assert warm_counts == cold_counts == [len(catalog.load()), len(diagnosis_codes.all_codes())]
