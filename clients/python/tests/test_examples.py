"""The quick start's snippets (examples/) run as written: the worker drains,
the producer's workload succeeds and its wait prints the result."""

import json
import os
import signal
import subprocess
import sys

import psycopg

import workload
from conftest import dsn

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def test_examples_run_as_written(admin):
    for role in ("wlc_app", "wlc_worker"):
        admin.execute("SELECT workload_add_tenant_member(%s, 'acme', 'billing')", (role,))
    body = workload.grant("acme", "billing", "service:billing", capabilities=["pdf"],
                          database_role="wlc_app")
    signed = admin.execute("SELECT workload_sign_grant(%s)",
                           (psycopg.types.json.Jsonb(body),)).fetchone()[0]
    env = dict(os.environ, APP_DSN=dsn("APP"), WORKER_DSN=dsn("WORKER"),
               BILLING_GRANT=json.dumps(signed),
               PYTHONPATH=os.path.dirname(os.path.dirname(workload.__file__)))
    worker = subprocess.Popen([sys.executable, os.path.join(EXAMPLES, "worker.py")], env=env)
    try:
        out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "producer.py")], env=env,
                             capture_output=True, text=True, timeout=90)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "SUCCEEDED {'pages': 3, 'invoice': 42}"
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0
