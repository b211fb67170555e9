"""Building the Kafka harness (impl/kafka/harness.py) without Maven: parallel builds of one version wait for each
other, so that test workers and runs sharing ~/.cache/kraftcheck/kafka-harness never build over each other."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kraftcheck.impl.kafka import harness


def test_parallel_builds_of_one_version_build_once_one_at_a_time(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(harness.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    running, most, builds = [0], [0], []
    guard = threading.Lock()

    def fake_maven(cmd: list[str], cwd: Path, **_: Any) -> subprocess.CompletedProcess[str]:
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
            builds.append(cwd)
        time.sleep(0.3)  # a build takes a while: a second one started meanwhile would overlap it
        (cwd / "target" / "classes").mkdir(parents=True)
        (cwd / "target" / "classpath.txt").write_text("/jars/kafka-raft.jar")
        with guard:
            running[0] -= 1
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(harness.subprocess, "run", fake_maven)
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(harness.build(harness.DEFAULT_VERSION)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = tmp_path / "kraftcheck" / "kafka-harness" / f"{harness.DEFAULT_VERSION}-{harness._source_digest()}"
    assert out == harness.cache_dir(harness.DEFAULT_VERSION)  # one directory per version and state of the sources
    assert most[0] == 1 and builds == [out]  # one build; the others waited for it and found it done
    assert results == [[str(out / "target" / "classes"), "/jars/kafka-raft.jar"]] * 3
