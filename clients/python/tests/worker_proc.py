"""A worker process for the tests that kill one (test_kill.py): runs until
SIGTERM, writing a JSON line per handler start and end to LOG.

usage: worker_proc.py MODE TENANT WORKER_ID CONCURRENCY LEASE LOG
MODE sleep: sleep input["ms"], return {"n": input["n"]}
MODE steps: resume, then checkpoint steps up to input["steps"], 0.3 s each
"""

import json
import os
import sys
import time

try:
    import workload
except ImportError:  # a checkout: the source beside the tests
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import workload  # noqa: E402

mode, tenant, worker_id, concurrency, lease, log_path = sys.argv[1:7]
log = open(log_path, "a", buffering=1)


def note(**kw):
    kw.update(pid=os.getpid(), t=time.time())
    log.write(json.dumps(kw) + "\n")


def sleep(inp, ctx):
    note(ev="start", id=ctx.workload_id, attempt=ctx.attempt, token=ctx.fencing_token)
    time.sleep(inp["ms"] / 1000)
    return {"n": inp["n"]}


def steps(inp, ctx):
    state = ctx.resume() or {"done": 0}
    note(ev="resume", id=ctx.workload_id, attempt=ctx.attempt, token=ctx.fencing_token,
         done=state["done"])
    for n in range(state["done"] + 1, inp["steps"] + 1):
        time.sleep(0.3)
        ctx.checkpoint({"done": n})
        note(ev="checkpoint", id=ctx.workload_id, attempt=ctx.attempt, done=n)
    return {"steps": inp["steps"], "resumed_from": state["done"]}


workload.run_worker(os.environ["WL_WORKER_DSN"], tenant, "app", [],
                    {"sleep": sleep, "steps": steps}[mode], worker_id=worker_id,
                    concurrency=int(concurrency), lease=float(lease), poll=1, grace=10)
note(ev="exit")
