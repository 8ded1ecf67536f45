"""Refusals are typed errors: one class per code of workload_error_codes(),
the same class whether a single call raised its SQLSTATE or a batch item
answered its code."""

import psycopg
import pytest

import workload
from workload import errors


def test_every_server_code_has_its_class(admin):
    rows = admin.execute("SELECT code, sqlstate FROM workload_error_codes()").fetchall()
    assert rows, "the server lists no codes"
    for code, sqlstate in rows:
        cls = errors.ERRORS.get(code)
        assert cls is not None, f"no class for {code}"
        assert cls.sqlstate == sqlstate, f"{code}: {cls.sqlstate} != {sqlstate}"
        assert issubclass(cls, workload.WorkloadError)
        assert getattr(workload, cls.__name__) is cls


def test_single_call_and_batch_item_give_the_same_class(client, worker_dsn, tenant):
    doc = client.create("e.stale", {"n": 1}, key="stale-1")
    with psycopg.connect(worker_dsn, autocommit=True) as w:
        row = w.execute("SELECT workload_id, claim_id, fencing_token FROM workload_claim("
                        "'w1', '{}', %s, 'app', start => true)", (tenant,)).fetchone()
        assert row[0] == doc["workload_id"]
        w.execute("SELECT workload_fail(%s, %s, 'w1', %s, 'permanent', 'x')", row)
        # the claim has ended: a single call raises WL006 ...
        with pytest.raises(psycopg.Error) as single:
            w.execute("SELECT workload_heartbeat(%s, %s, 'w1', %s, '30 seconds')", row)
        assert single.value.sqlstate == "WL006"
        # ... a batch item answers the code
        item = w.execute("SELECT code FROM workload_heartbeat_many('w1', jsonb_build_array("
                         "jsonb_build_object('workload_id', %s::text, 'claim_id', %s::text, "
                         "'fencing_token', %s::bigint)), '30 seconds')", row).fetchone()[0]
        assert item == "WORKLOAD_CLAIM_INVALID"
    a, b = errors.from_psycopg(single.value), errors.from_code(item)
    assert type(a) is type(b) is workload.ClaimInvalidError
    assert isinstance(a, workload.FenceError) and a.detail


def test_producer_calls_raise_typed_errors(client):
    client.create("e.idem", {"n": 1}, key="idem-1")
    with pytest.raises(workload.IdempotencyConflictError) as e:
        client.create("e.idem", {"n": 2}, key="idem-1")
    assert e.value.sqlstate == "WL012" and "idempotency" in e.value.message
    with pytest.raises(workload.NotFoundError):
        client.get("workload_000000000000000000000000")
    with pytest.raises(workload.SecretRejectedError):
        client.create("e.secret", {"password": "hunter2"}, key="secret-1")
