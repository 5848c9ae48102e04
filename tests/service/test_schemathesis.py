"""schemathesis against the served OpenAPI document of a real ``ranked serve``, with a
fixed seed and a bounded number of examples per operation: no server error, no status,
media type or body outside the document, and every request the document forbids refused.
(Requests the document allows may still be refused by a board's own rules: a page over
its ``max_page_size``, a cursor it did not make; so positive-data acceptance is not
asserted.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import Api

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
    ]
)


def test_schemathesis_finds_nothing(api: Api, tmp_path: Path) -> None:
    api.call("PUT", "/v1/boards/arena", json={"public_reads": True, "max_page_size": 50})
    for i in range(20):
        api.call("POST", "/v1/boards/arena/scores", json={"member": f"p{i}", "score": i})
    binary = shutil.which("schemathesis") or str(Path(sys.executable).parent / "schemathesis")
    run = subprocess.run(
        [
            binary,
            "run",
            f"{api.service.url}/openapi.json",
            "-H",
            f"Authorization: Bearer {api.keys['admin']}",
            "--checks",
            CHECKS,
            "--max-examples",
            "25",
            "--seed",
            "20261126",
            "--workers",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # its cache stays out of the repository
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    totals = re.search(r"(\d+) generated, (\d+) passed", output)
    assert totals is not None, output[-2000:]
    assert int(totals.group(1)) > 500 and totals.group(1) == totals.group(2)
    print(f"schemathesis ({api.deployment}): {totals.group(0)}")
