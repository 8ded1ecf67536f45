"""The worker in process: outcomes from the handler's return or exception,
hooks, cancellation, checkpoints, the execution context."""

import asyncio
import time
from datetime import timedelta

import psycopg
import pytest

import workload
from conftest import APP, dsn, states, wait_for




def test_sync_handler_completes_with_its_return_value_and_hooks_see_it(client, start_worker):
    seen = {"claimed": [], "succeeded": []}
    hooks = workload.Hooks(claimed=lambda j: seen["claimed"].append(j.workload_id),
                           succeeded=lambda j, out: seen["succeeded"].append((j.workload_id, out)))
    ids = [client.create("w.add", {"a": i, "b": 1}, key=f"add-{i}", capabilities=["math"])
           ["workload_id"] for i in range(5)]
    contexts = []

    def add(inp, ctx):
        contexts.append(ctx.execution_context)
        assert ctx.fencing_token == 1 and ctx.attempt == 1 and ctx.claim_id.startswith("claim_")
        return {"sum": inp["a"] + inp["b"]}

    w = start_worker(add, ["math"], concurrency=2, hooks=hooks)
    wait_for(lambda: states(client, ids) == ["SUCCEEDED"] * 5)
    w.stop()
    assert [client.get(i)["result"]["output"]["sum"] for i in ids] == [1, 2, 3, 4, 5]
    assert sorted(seen["claimed"]) == sorted(ids)
    assert sorted(i for i, _ in seen["succeeded"]) == sorted(ids)
    # the execution context came with each job, verified by the server
    assert len(contexts) == 5 and all(c["capabilities"] == ["math"] for c in contexts)
    assert {c["workload_id"] for c in contexts} == set(ids)


def test_async_handler(client, start_worker):
    async def slow_echo(inp, ctx):
        await asyncio.sleep(0.05)
        return inp

    ids = [client.create("w.echo", {"n": i}, key=f"echo-{i}")["workload_id"] for i in range(10)]
    w = start_worker(slow_echo, concurrency=4)
    wait_for(lambda: states(client, ids) == ["SUCCEEDED"] * 10)
    w.stop()
    assert [client.get(i)["result"]["output"] for i in ids] == [{"n": i} for i in range(10)]


def test_permanent_error_dead_letters_and_other_errors_are_retried(client, start_worker):
    failed = []
    hooks = workload.Hooks(failed=lambda j, kind, err, state: failed.append((j.attempt, kind, state)))
    bad = client.create("w.bad", {}, key="bad")["workload_id"]
    flaky = client.create("w.flaky", {}, key="flaky",
                          retry_policy={"initial_delay_ms": 0})["workload_id"]

    def handler(inp, ctx):
        if ctx.definition_id == "w.bad":
            raise workload.PermanentError("the invoice does not exist")
        if ctx.attempt == 1:
            raise ConnectionError("smtp went away")
        return {"sent": True}

    w = start_worker(handler, hooks=hooks)
    wait_for(lambda: states(client, [bad, flaky]) == ["DEAD_LETTER", "SUCCEEDED"])
    w.stop()
    doc = client.get(bad)
    assert doc["attempt_count"] == 1
    assert doc["last_failure"]["kind"] == "permanent"
    assert "the invoice does not exist" in doc["last_failure"]["error"]
    assert client.get(flaky)["attempt_count"] == 2
    assert sorted(failed) == [(1, "permanent", "DEAD_LETTER"), (1, "worker_failure", "READY")]


def test_cancellation_reaches_the_handler_and_is_confirmed(client, start_worker):
    cancelled = []
    hooks = workload.Hooks(cancelled=lambda j: cancelled.append(j.workload_id))
    wid = client.create("w.long", {}, key="long")["workload_id"]

    def long_job(inp, ctx):
        while True:
            ctx.raise_if_cancelled()
            time.sleep(0.05)

    w = start_worker(long_job, lease=1.5, hooks=hooks)
    wait_for(lambda: client.get(wid)["state"] == "RUNNING")
    t0 = time.monotonic()
    assert client.cancel(wid, "ops") == "CANCELLATION_REQUESTED"
    wait_for(lambda: client.get(wid)["state"] == "CANCELLED")
    # a heartbeat (every third of the lease) carried the request
    assert time.monotonic() - t0 < 1.5 + 1
    w.stop()
    assert cancelled == [wid]


def test_checkpoint_and_resume_through_the_context(client, start_worker):
    wid = client.create("w.steps", {"steps": 4}, key="steps",
                        retry_policy={"initial_delay_ms": 0})["workload_id"]
    runs = []

    async def steps(inp, ctx):
        state = await ctx.resume() or {"done": 0}
        runs.append((ctx.attempt, state["done"]))
        for n in range(state["done"] + 1, inp["steps"] + 1):
            await ctx.checkpoint({"done": n})
            if n == 2 and ctx.attempt == 1:
                raise workload.RetryableError("crashed after step 2", kind="transient_connection")
        return {"steps": n}

    w = start_worker(steps)
    wait_for(lambda: client.get(wid)["state"] == "SUCCEEDED")
    w.stop()
    assert runs == [(1, 0), (2, 2)]
    doc = client.get(wid)
    assert [c["state"]["done"] for c in doc["checkpoints"]] == [1, 2, 3, 4]
    assert doc["last_failure"]["kind"] == "transient_connection"


def test_work_whose_grant_expired_is_never_run(admin, tenant, start_worker):
    body = workload.grant(tenant, APP, "service:billing", ttl=timedelta(seconds=2))
    signed = admin.execute("SELECT workload_sign_grant(%s)",
                           (psycopg.types.json.Jsonb(body),)).fetchone()[0]
    with workload.Client(dsn("APP"), tenant, APP, grant=signed) as c:
        wid = c.create("w.late", {}, key="late")["workload_id"]
        time.sleep(2.5)  # the grant has expired; the workload is still READY
        ran = []
        w = start_worker(lambda inp, ctx: ran.append(ctx.workload_id))
        wait_for(lambda: c.get(wid)["state"] == "DEAD_LETTER")
        w.stop()
        assert ran == []
        # the claim dead-letters it, with the cause (SPEC section 5.1)
        last = c.get(wid)["events"][-1]
        assert (last["to_state"], last["actor"], last["evidence"]) == (
            "DEAD_LETTER", "workload.claim", {"cause": "authorization_expired"})


def test_setup_refusal_is_raised(client, worker_dsn):
    w = workload.Worker(worker_dsn, "not-my-tenant", APP, [], lambda i, c: None)
    with pytest.raises(workload.UnauthorizedError):
        asyncio.run(w.run())
