"""``ranked guard ...`` against a real ``ranked serve``: set and show a guard, then the
moderation commands on a held submission and a banned member."""

from __future__ import annotations

import json

from .conftest import RunningService, create


def test_guard_commands(service: RunningService, board: str) -> None:
    create(service, board)
    settings = json.dumps({"pending_rank": 1, "max_score": 1000})
    done = service.cli("guard", "set", board, settings)
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["settings"]["pending_rank"] == 1
    shown = service.cli("guard", "show", board)
    assert json.loads(shown.output)["settings"]["max_score"] == 1000
    bad = service.cli("guard", "set", board, '{"min_score": 5, "max_score": 1}')
    assert bad.exit_code == 1 and "422" in bad.output
    with service.api() as api:
        held = api.post(f"/v1/boards/{board}/scores", json={"member": "a", "score": 10})
        assert held.status_code == 200  # an admin key is trusted: not held
        held = api.post(f"/v1/boards/{board}/scores", json={"member": "b", "score": 20})
    listed = service.cli("guard", "pending", board)
    assert listed.output.strip() == "nothing pending"
    # a client key's submission above the top is held
    from ranked.service.keys import KeyStore, Scope

    with KeyStore(service.data_dir) as keys:
        client_key = keys.create(Scope.READ, name="client")[1]
    with service.api(client_key) as api:
        held = api.post(f"/v1/boards/{board}/scores", json={"member": "c", "score": 30})
        assert held.status_code == 202, held.text
        other = api.post(f"/v1/boards/{board}/scores", json={"member": "d", "score": 40})
    pending_id = held.json()["pending"]
    listed = service.cli("guard", "pending", board)
    assert pending_id in listed.output and "rank-tier" in listed.output
    promoted = service.cli("guard", "promote", board, pending_id)
    assert promoted.exit_code == 0 and "rank 1" in promoted.output
    again = service.cli("guard", "promote", board, pending_id)
    assert again.exit_code == 1 and "404" in again.output
    rejected = service.cli("guard", "reject", board, other.json()["pending"], "--reason", "no")
    assert rejected.exit_code == 0 and "rejected: d 40" in rejected.output
    banned = service.cli("guard", "ban", board, "c", "--reason", "cheat", "--purge")
    assert banned.output.splitlines() == ["banned", "scores removed"]
    assert service.cli("guard", "bans", board).output.strip() == "c"
    assert "unbanned" in service.cli("guard", "unban", board, "c", "--reason", "appeal").output
    audit = service.cli("guard", "audit", board, "--member", "c")
    actions = [line.split()[1] for line in audit.output.splitlines()]
    assert actions == ["held", "promoted", "banned", "removed", "unbanned"]
    assert "guard removed" in service.cli("guard", "off", board).output
    again = service.cli("guard", "off", board)  # nothing left to remove: not an error
    assert again.exit_code == 0 and "the board had no guard" in again.output
