"""Fixtures: the database test/clients/python.sh made (WL_*_DSN), a tenant of
each test's own (so tests never see each other's workloads), a grant signed
for it, a producer, and a worker run in a thread."""

import asyncio
import os
import sys
import threading
import time
import uuid

import psycopg
import pytest

try:
    import workload  # the installed package (test/clients/python.sh installs it)
except ImportError:  # a checkout: the source beside the tests
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import workload  # noqa: E402

APP = "app"


def wait_for(fn, timeout=20, every=0.05):
    """Polls fn until it answers something true, and answers that; fails the test after timeout s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s: {fn}")


def states(client, ids):
    return [client.get(i)["state"] for i in ids]


def dsn(name):
    value = os.environ.get(f"WL_{name}_DSN")
    if not value:
        pytest.skip(f"WL_{name}_DSN is not set: run test/clients/python.sh")
    return value


@pytest.fixture
def admin():
    with psycopg.connect(dsn("ADMIN"), autocommit=True) as conn:
        yield conn


@pytest.fixture
def tenant(admin):
    t = "t" + uuid.uuid4().hex[:10]
    for role in ("wlc_app", "wlc_worker"):
        admin.execute("SELECT workload_add_tenant_member(%s, %s, %s)", (role, t, APP))
    return t


@pytest.fixture
def grant(admin, tenant):
    body = workload.grant(tenant, APP, "service:billing", capabilities=["*"])
    return admin.execute("SELECT workload_sign_grant(%s)",
                         (psycopg.types.json.Jsonb(body),)).fetchone()[0]


@pytest.fixture
def client(tenant, grant):
    with workload.Client(dsn("APP"), tenant, APP, grant=grant, environment="test") as c:
        yield c


@pytest.fixture
def worker_dsn():
    return dsn("WORKER")


def recover(admin):
    """What the tick does first: recover expired leases."""
    return [r[0] for r in admin.execute("SELECT workload_recover_expired()").fetchall()]


class Running:
    """A Worker run in a thread of its own, with its own asyncio loop."""

    def __init__(self, *args, **kw):
        self.worker = workload.Worker(*args, **kw)
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            asyncio.run(self.worker.run())
        except BaseException as e:  # kept for the test to look at
            self.error = e

    def stop(self, timeout=30):
        self.worker.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the worker did not stop"
        if self.error:
            raise self.error


@pytest.fixture
def start_worker(worker_dsn, tenant):
    started = []

    def start(handler, caps=(), **kw):
        kw.setdefault("lease", 3)
        kw.setdefault("poll", 1)
        r = Running(worker_dsn, tenant, APP, list(caps), handler, **kw)
        started.append(r)
        return r

    yield start
    for r in started:
        if r.thread.is_alive():
            r.worker.stop()
            r.thread.join(30)
