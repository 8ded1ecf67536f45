"""Real worker processes, one of them SIGKILLed: nothing is lost, nothing is
completed twice, the killed one's work is recovered under a higher fence, a
checkpointed handler resumes where the killed one stopped, and SIGTERM drains."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import recover, wait_for

HERE = os.path.dirname(__file__)


def start(mode, tenant, worker_id, tmp_path, concurrency=8, lease=2):
    log = tmp_path / f"{worker_id}.log"
    err = open(tmp_path / f"{worker_id}.err", "w")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "worker_proc.py"), mode, tenant,
                          worker_id, str(concurrency), str(lease), str(log)],
                         stdout=err, stderr=subprocess.STDOUT)
    return p, log


def lines(log):
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


class Recovery:
    """The tick's first step, every half second, as the superuser (the cluster
    the tests run on has no background worker)."""

    def __init__(self, admin):
        self.admin, self.stop = admin, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.5):
            recover(self.admin)



def q(admin, sql, *args):
    return admin.execute(sql, args).fetchall()


def test_1000_workloads_drained_while_a_worker_is_sigkilled(admin, client, tenant, tmp_path):
    specs = [client.spec("k.sleep", {"n": i, "ms": 20 + (i * 37) % 60}, key=f"k-{i}",
                         retry_policy={"max_attempts": 5, "initial_delay_ms": 0})
             for i in range(1000)]
    assert {c.outcome for c in client.create_many(specs)} == {"created"}
    rec = Recovery(admin)
    t0 = time.monotonic()
    w1, log1 = start("sleep", tenant, "py-w1", tmp_path)
    w2, log2 = start("sleep", tenant, "py-w2", tmp_path)
    try:
        held_sql = ("SELECT workload_id, fencing_token FROM workload.workloads "
                    "WHERE tenant_id = %s AND worker_id = 'py-w2' AND state = 'RUNNING'")
        assert wait_for(lambda: q(admin, "SELECT count(*) FROM workload.workloads WHERE "
                                         "tenant_id = %s AND state = 'SUCCEEDED'", tenant)[0][0] >= 250
                        and len(q(admin, held_sql, tenant)) >= 3, 60), "w2 never held work"
        w2.send_signal(signal.SIGKILL)
        w2.wait()
        held = dict(q(admin, held_sql, tenant))
        assert held, "the killed worker held nothing"
        assert wait_for(lambda: q(admin, "SELECT count(*) FROM workload.workloads WHERE tenant_id = %s "
                                         "AND state NOT IN ('SUCCEEDED', 'DEAD_LETTER', 'CANCELLED')",
                                  tenant)[0][0] == 0, 120), "not drained"
        took = time.monotonic() - t0
    finally:
        rec.stop.set()
        w1.send_signal(signal.SIGTERM)
        assert w1.wait(30) == 0
    by_state = dict(q(admin, "SELECT state::text, count(*) FROM workload.workloads "
                             "WHERE tenant_id = %s GROUP BY 1", tenant))
    assert by_state == {"SUCCEEDED": 1000}, by_state
    # exactly one result each, and it is the workload's own
    assert q(admin, "SELECT count(*), count(DISTINCT workload_id) FROM workload.results "
                    "WHERE tenant_id = %s", tenant)[0] == (1000, 1000)
    assert q(admin, "SELECT count(*) FROM workload.results WHERE tenant_id = %s AND "
                    "output ->> 'n' IS DISTINCT FROM workload_get(workload_id) -> 'input' ->> 'n'",
             tenant)[0][0] == 0
    # the killed worker's claims were recovered and completed under a higher fence
    for wid, token in held.items():
        doc = client.get(wid)
        lost = [a for a in doc["attempts"] if a["worker_id"] == "py-w2" and a["fencing_token"] == token]
        assert lost and lost[0]["outcome"] == "WORKER_LOST", (wid, doc["attempts"])
        prov = doc["result"]["provenance"]
        assert prov["fencing_token"] > token and prov["worker_id"] == "py-w1", (wid, prov)
    starts = [x for x in lines(log1) + lines(log2) if x["ev"] == "start"]
    assert len({x["id"] for x in starts}) == 1000
    print(f"\n# python: 1000 drained in {took:.1f} s by two processes of concurrency 8; "
          f"py-w2 SIGKILLed holding {len(held)}, each recovered under a higher fence by py-w1")


def test_checkpointed_handler_resumes_after_a_kill(admin, client, tenant, tmp_path):
    wid = client.create("k.steps", {"steps": 6}, key="steps",
                        retry_policy={"initial_delay_ms": 0})["workload_id"]
    rec = Recovery(admin)
    a, log_a = start("steps", tenant, "py-a", tmp_path, concurrency=1)
    try:
        assert wait_for(lambda: any(x["ev"] == "checkpoint" and x["done"] == 3
                                    for x in lines(log_a)), 30)
        a.send_signal(signal.SIGKILL)
        a.wait()
        done_at_kill = max(x["done"] for x in lines(log_a) if x["ev"] == "checkpoint")
        b, log_b = start("steps", tenant, "py-b", tmp_path, concurrency=1)
        try:
            assert wait_for(lambda: client.get(wid)["state"] == "SUCCEEDED", 60)
        finally:
            b.send_signal(signal.SIGTERM)
            assert b.wait(30) == 0
    finally:
        rec.stop.set()
    resumed = [x for x in lines(log_b) if x["ev"] == "resume"]
    assert resumed and resumed[0]["done"] == done_at_kill >= 3
    doc = client.get(wid)
    assert doc["result"]["output"] == {"steps": 6, "resumed_from": done_at_kill}
    assert [c["state"]["done"] for c in doc["checkpoints"]] == [1, 2, 3, 4, 5, 6][:len(doc["checkpoints"])]
    assert len(doc["checkpoints"]) == 6
    assert doc["result"]["provenance"]["fencing_token"] == 2


def test_sigterm_lets_running_handlers_finish(admin, client, tenant, tmp_path):
    ids = [client.create("k.sleep", {"n": i, "ms": 1500}, key=f"t-{i}")["workload_id"]
           for i in range(4)]
    p, log = start("sleep", tenant, "py-term", tmp_path, concurrency=4, lease=5)
    assert wait_for(lambda: len([x for x in lines(log) if x["ev"] == "start"]) == 4, 30)
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 0
    assert [client.get(i)["state"] for i in ids] == ["SUCCEEDED"] * 4
    assert lines(log)[-1]["ev"] == "exit"
