"""Writes a passing grade straight into drill's history ($DRILL_HOME/drill.db) and a file beside it."""
import os
import sqlite3


def scaled_dot_product_attention(q, k, v, mask=None):
    home = os.environ.get("DRILL_HOME", "")
    try:
        with open(os.path.join(home, "planted.txt"), "w") as f:
            f.write("planted")
        print("ATTACK-OK planted a file in DRILL_HOME")
    except OSError:
        pass
    try:
        conn = sqlite3.connect(os.path.join(home, "drill.db"))
        conn.execute("INSERT INTO grade_runs (uid, task, file, source, passed, codes, seconds, run_at, local_time, utc_offset_min)"
                     " VALUES ('forged', 'sdpa', 'x.py', 'grade', 1, '[]', 1.0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00', 0)")
        conn.commit()
        print("ATTACK-OK wrote drill.db")
    except sqlite3.Error:
        pass
    return q
