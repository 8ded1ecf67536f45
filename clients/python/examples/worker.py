# A worker: render invoices, eight at a time, until SIGTERM.
import os

from workload import PermanentError, run_worker


def render(invoice, ctx):
    if "invoice" not in invoice:
        raise PermanentError("no invoice number")  # dead-lettered, never retried
    return {"pages": 3, "invoice": invoice["invoice"]}


run_worker(os.environ["WORKER_DSN"], "acme", "billing", ["pdf"], render, concurrency=8)
