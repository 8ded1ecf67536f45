# bench/clients.sh: a Python worker with a no-op handler (until SIGTERM).
# usage: noop.py CONNINFO TENANT CONCURRENCY
import sys

from workload import run_worker

run_worker(sys.argv[1], sys.argv[2], "bench", [], lambda input, ctx: None,
           concurrency=int(sys.argv[3]), worker_id="py-noop", lease=30, poll=1)
