"""State files a crash can leave damaged: the agent stats log and the sysctl record."""

import json

from lab.plumbing import cleanup
from lab.runners.workers import read_stats


def test_a_torn_stats_line_costs_one_record_not_the_rest(tmp_path):
    log = tmp_path / "h0.jsonl"
    lines = [
        json.dumps({"type": "path", "plane": 0, "ev": 1, "state": "GOOD", "time": 1.0}),
        '{"type": "path", "pla',  # torn by a killed agent
        "\x00\x00garbage",
        json.dumps({"type": "stats", "sent": 5}),
        json.dumps({"type": "stats", "sent": 9}),
        "[1, 2]",  # valid JSON, not a record
    ]
    log.write_text("\n".join(lines) + "\n")
    stats = read_stats(str(log))
    assert stats["counters"] == {"type": "stats", "sent": 9}
    assert [t["ev"] for t in stats["transitions"]] == [1]
    assert stats["unreadable_lines"] == 3


def test_missing_stats_file_reads_as_empty(tmp_path):
    assert read_stats(str(tmp_path / "none.jsonl")) == {"counters": {}, "transitions": [],
                                                        "unreadable_lines": 0}


def test_damaged_sysctl_record_is_set_aside_with_a_warning(tmp_path, monkeypatch, capsys):
    state = tmp_path / "sysctl.json"
    monkeypatch.setattr(cleanup, "SYSCTL_STATE", state)
    state.write_text('{"net.core.wmem_default": "21')
    assert cleanup.saved_sysctls() == {}
    assert not state.exists() and state.with_suffix(".damaged").exists()
    assert "cannot be restored automatically" in capsys.readouterr().err
    assert cleanup.restore_sysctls() == []


def test_whole_sysctl_record_is_read(tmp_path, monkeypatch):
    state = tmp_path / "sysctl.json"
    monkeypatch.setattr(cleanup, "SYSCTL_STATE", state)
    state.write_text(json.dumps({"net.core.wmem_default": "212992"}))
    assert cleanup.saved_sysctls() == {"net.core.wmem_default": "212992"}
