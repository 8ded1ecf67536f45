"""The worker's claims carry each workload's execution context (context=True,
the default): the handler gets what workload_execution_context answers with
no second call, and work whose authority no longer verifies is dead-lettered
by the claim instead of being handed out; context=False asks in a second
statement, and secret references are always asked for."""

import psycopg
from psycopg.types.json import Jsonb

import workload
from conftest import APP, states, wait_for




def asked(worker_dsn, ctx, refs=()):
    """What workload_execution_context answers for the job's claim, asked by the claim's role."""
    with psycopg.connect(worker_dsn, autocommit=True) as conn:
        return conn.execute("SELECT workload_execution_context(%s, %s, %s, %s, %s::text[])",
                            (ctx.workload_id, ctx.claim_id, ctx.worker_id, ctx.fencing_token,
                             list(refs))).fetchone()[0]


def retire_the_key_of(admin, signed, tenant):
    """Rotates the signing key and retires the one ``signed`` was signed under; answers a
    grant signed under the new key."""
    admin.execute("SELECT workload_rotate_signing_key()")
    admin.execute("SELECT workload_retire_signing_key(%s)", (signed["key_id"],))
    body = workload.grant(tenant, APP, "service:billing", capabilities=["*"])
    return admin.execute("SELECT workload_sign_grant(%s)", (Jsonb(body),)).fetchone()[0]


def test_each_claimed_job_carries_what_workload_execution_context_answers(client, start_worker,
                                                                           worker_dsn):
    ids = [client.create("c.ctx", {"n": i}, key=f"ctx-{i}", capabilities=["pdf"],
                         connection_scopes=["db:invoices"])["workload_id"] for i in range(3)]
    seen = []

    def handler(inp, ctx):
        seen.append((ctx.workload_id, ctx.execution_context, asked(worker_dsn, ctx)))
        return {}

    # one claim of three (concurrency 3), no heartbeat before the handlers ask (lease 30)
    w = start_worker(handler, ["pdf"], context=True, concurrency=3, lease=30)
    wait_for(lambda: states(client, ids) == ["SUCCEEDED"] * 3)
    w.stop()
    assert sorted(s[0] for s in seen) == sorted(ids)
    for wid, got, answer in seen:
        assert isinstance(got, dict) and got["workload_id"] == wid
        assert got == answer
        assert got["capabilities"] == ["pdf"] and got["connection_scopes"] == ["db:invoices"]
        assert got["secret_references"] == []


def test_work_whose_signing_key_was_retired_is_dead_lettered_by_the_claim(admin, tenant, grant,
                                                                          client, start_worker):
    old = client.create("c.old", {}, key="old")["workload_id"]
    newer = retire_the_key_of(admin, grant, tenant)
    new = client.create("c.new", {}, key="new", grant=newer)["workload_id"]
    ran, failed = [], []
    w = start_worker(lambda inp, ctx: ran.append(ctx.workload_id), context=True,
                     hooks=workload.Hooks(failed=lambda j, *a: failed.append(j.workload_id)))
    wait_for(lambda: states(client, [old, new]) == ["DEAD_LETTER", "SUCCEEDED"])
    w.stop()
    assert ran == [new] and failed == []
    doc = client.get(old)
    last = doc["events"][-1]
    assert (last["to_state"], last["actor"], last["evidence"]) == (
        "DEAD_LETTER", "workload.claim", {"cause": "authorization_invalid"})
    assert doc["last_failure"] is None


def test_without_context_the_worker_asks_and_fails_that_work_itself(admin, tenant, grant, client,
                                                                    start_worker):
    old = client.create("c.old", {}, key="old")["workload_id"]
    retire_the_key_of(admin, grant, tenant)
    ran, failed = [], []
    w = start_worker(lambda inp, ctx: ran.append(ctx.workload_id), context=False,
                     hooks=workload.Hooks(failed=lambda j, kind, err, state:
                                          failed.append((j.workload_id, kind, state))))
    wait_for(lambda: client.get(old)["state"] == "DEAD_LETTER")
    w.stop()
    assert ran == []
    assert failed == [(old, "authorization_denied", "DEAD_LETTER")]
    assert client.get(old)["last_failure"]["kind"] == "authorization_denied"


def test_secret_references_reach_the_context(client, start_worker, worker_dsn):
    refs = ["secret://vault/smtp"]
    wid = client.create("c.refs", {}, key="refs")["workload_id"]
    seen = []

    def handler(inp, ctx):
        seen.append((ctx.execution_context, asked(worker_dsn, ctx, refs)))
        return {}

    w = start_worker(handler, context=True, secret_references=refs, lease=30)
    wait_for(lambda: client.get(wid)["state"] == "SUCCEEDED")
    w.stop()
    [(got, answer)] = seen
    assert got["secret_references"] == refs and got == answer

