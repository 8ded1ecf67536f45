"""The producer: create, create_many, get, cancel, retry, redrive, schedules,
the grant helper, and wait (woken by the worker's announcement)."""

import asyncio
import threading
import time

import psycopg
import pytest

import workload
from conftest import APP, dsn


def test_grant_helper_builds_a_grant_the_server_signs_and_verifies(admin, tenant):
    body = workload.grant(tenant, APP, "service:billing", capabilities=["pdf"],
                          database_role="wlc_app")
    assert set(body) == {"contract_version", "id", "issuer", "subject", "tenant_id",
                         "application_id", "capabilities", "resources", "constraints",
                         "issued_at", "expires_at", "parent_grant", "revision", "status"}
    signed = admin.execute("SELECT workload_sign_grant(%s)",
                           (psycopg.types.json.Jsonb(body),)).fetchone()[0]
    assert admin.execute("SELECT workload_verify_grant(%s)",
                         (psycopg.types.json.Jsonb(signed),)).fetchone()[0] is True
    with workload.Client(dsn("APP"), tenant, APP, grant=signed) as c:
        doc = c.create("g.pdf", {"n": 1}, key="g-1", capabilities=["pdf"])
        assert doc["requested_by"] == {"kind": "service", "id": "billing"}
        # the grant does not cover "zip": a caller cannot widen it
        with pytest.raises(workload.UnauthorizedError):
            c.create("g.zip", {"n": 1}, key="g-2", capabilities=["zip"])
    # bound to wlc_app: the worker's role may not present it
    with psycopg.connect(dsn("ADMIN"), autocommit=True) as a:
        a.execute("GRANT workload_client TO wlc_worker")
    try:
        with workload.Client(dsn("WORKER"), tenant, APP, grant=signed) as c:
            with pytest.raises(workload.UnauthorizedError):
                c.create("g.pdf", {"n": 2}, key="g-3", capabilities=["pdf"])
    finally:
        with psycopg.connect(dsn("ADMIN"), autocommit=True) as a:
            a.execute("REVOKE workload_client FROM wlc_worker")


def test_create_get_list_cancel_retry(client, tenant):
    doc = client.create("p.one", {"n": 1}, key="one", priority=5)
    assert doc["state"] == "READY" and doc["priority"] == 5 and doc["tenant_id"] == tenant
    again = client.create("p.one", {"n": 1}, key="one", priority=5)
    assert again["workload_id"] == doc["workload_id"]
    assert client.get(doc["workload_id"])["input"] == {"n": 1}
    assert [d["workload_id"] for d in client.list("READY")] == [doc["workload_id"]]
    assert client.cancel(doc["workload_id"], "ops") == "CANCELLED"
    with pytest.raises(workload.TransitionDeniedError):
        client.retry(doc["workload_id"], "ops")
    assert client.stats()["states"]["CANCELLED"] == 1


def test_create_many_answers_each_item(client):
    specs = [client.spec("p.many", {"n": i}, key=f"many-{i}") for i in range(3)]
    specs.append(client.spec("p.many", {"password": "x"}, key="many-bad"))
    out = client.create_many(specs)
    assert [c.outcome for c in out] == ["created"] * 3 + ["refused"]
    assert isinstance(out[3].error, workload.SecretRejectedError) and out[0].error is None
    assert [c.outcome for c in client.create_many(specs[:1])] == ["existing"]


def test_redrive_moves_dead_letters_back(client, worker_dsn, tenant):
    ids = [client.create("p.dead", {"n": i}, key=f"dead-{i}")["workload_id"] for i in range(2)]
    with psycopg.connect(worker_dsn, autocommit=True) as w:
        for row in w.execute("SELECT workload_id, claim_id, fencing_token FROM workload_claim("
                             "'w', '{}', %s, 'app', max_items => 2, start => true)",
                             (tenant,)).fetchall():
            w.execute("SELECT workload_fail(%s, %s, 'w', %s, 'permanent', 'no')", row)
    assert sorted(client.redrive("ops", failure_kind="permanent")) == sorted(ids)
    assert {client.get(i)["state"] for i in ids} == {"READY"}


def test_schedules(client):
    doc = client.schedule("nightly", "0 3 * * *", client.template("p.nightly", {}),
                          timezone="Europe/Berlin")
    assert doc["schedule_id"] == "nightly" and doc["paused"] is False
    assert client.pause_schedule("nightly")["paused"] is True
    assert client.resume_schedule("nightly")["paused"] is False
    assert [s["schedule_id"] for s in client.schedules()] == ["nightly"]
    client.drop_schedule("nightly")
    with pytest.raises(workload.NotFoundError):
        client.drop_schedule("nightly")


def test_wait_is_woken_by_the_completion_not_by_polling(client, start_worker):
    doc = client.create("p.wait", {"n": 7}, key="wait-1")
    worker = start_worker(lambda inp, ctx: (time.sleep(0.5), {"double": inp["n"] * 2})[1])
    t0 = time.monotonic()
    # poll=30: only a notification can end this wait within the assertion's bound
    done = client.wait(doc["workload_id"], timeout=20, poll=30)
    took = time.monotonic() - t0
    assert done["state"] == "SUCCEEDED" and done["result"]["output"] == {"double": 14}
    assert took < 5, f"wait took {took:.1f} s"
    # nobody holds "nobody": it stays READY, and the wait ends at its timeout
    never = client.create("p.never", {}, key="never", capabilities=["nobody"])
    with pytest.raises(TimeoutError):
        client.wait(never["workload_id"], timeout=0.5)
    worker.stop()


def test_async_client_and_wait(tenant, grant, start_worker):
    async def main():
        c = await workload.AsyncClient.connect(dsn("APP"), tenant, APP, grant=grant)
        async with c:
            doc = await c.create("p.async", {"n": 3}, key="async-1")
            with pytest.raises(workload.IdempotencyConflictError):
                await c.create("p.async", {"n": 4}, key="async-1")
            done = await c.wait(doc["workload_id"], timeout=20, poll=30)
            return done
    worker = start_worker(lambda inp, ctx: {"seen": inp["n"]})
    done = asyncio.run(main())
    assert done["state"] == "SUCCEEDED" and done["result"]["output"] == {"seen": 3}
    worker.stop()
