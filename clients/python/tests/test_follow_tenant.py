"""The worker goes where workload_tenant_node says its tenant is, asking again
on a quiet poll round.  On one node the function answers nothing; here a
function of the same name, earlier on the worker role's search_path, answers
this server by TCP and then by its socket directory, so the move shows in
pg_stat_activity as the worker's backends losing their client address."""

import time

import psycopg
from psycopg.conninfo import make_conninfo

from conftest import APP, Running, dsn, wait_for


def backends(admin, tenant_unused=None):
    return admin.execute(
        "SELECT count(*) FILTER (WHERE client_addr IS NOT NULL), count(*) FILTER (WHERE client_addr IS NULL) "
        "FROM pg_stat_activity WHERE usename = 'wlc_worker' AND datname = current_database()").fetchone()



def test_worker_follows_its_tenant_node(admin, client, tenant):
    info = admin.info
    socket_dir, port = info.host, str(info.port)
    assert socket_dir.startswith("/"), "the tests connect by the socket directory"
    admin.execute("CREATE SCHEMA IF NOT EXISTS fake_citus")
    admin.execute("CREATE TABLE IF NOT EXISTS fake_citus.node (host text, port int)")
    admin.execute("DELETE FROM fake_citus.node")
    admin.execute("INSERT INTO fake_citus.node VALUES ('127.0.0.1', %s)", (int(port),))
    admin.execute("GRANT USAGE ON SCHEMA fake_citus TO wlc_worker")
    admin.execute("GRANT SELECT ON fake_citus.node TO wlc_worker")
    admin.execute("""CREATE OR REPLACE FUNCTION fake_citus.workload_tenant_node(tenant_id text,
        OUT host text, OUT port integer) RETURNS SETOF record LANGUAGE sql
        AS 'SELECT host, port FROM fake_citus.node'""")
    admin.execute("ALTER ROLE wlc_worker SET search_path = fake_citus, public")
    try:
        wid = client.create("f.one", {}, key="one")["workload_id"]
        tcp = make_conninfo(dsn("WORKER"), host="127.0.0.1")
        w = Running(tcp, tenant, APP, [], lambda inp, ctx: {"ok": True}, lease=3, poll=0.5)
        assert wait_for(lambda: client.get(wid)["state"] == "SUCCEEDED")
        # where it was told the tenant is: where it connected (TCP)
        assert wait_for(lambda: backends(admin)[0] >= 2 and backends(admin)[1] == 0), backends(admin)
        # the tenant "moves" to the socket directory: a quiet round asks again and moves
        admin.execute("UPDATE fake_citus.node SET host = %s", (socket_dir,))
        assert wait_for(lambda: backends(admin)[1] >= 2 and backends(admin)[0] == 0), backends(admin)
        # and work goes on there, woken by the listener on the new node
        t0 = time.monotonic()
        wid2 = client.create("f.two", {}, key="two")["workload_id"]
        assert wait_for(lambda: client.get(wid2)["state"] == "SUCCEEDED")
        assert time.monotonic() - t0 < 2
        w.stop()
    finally:
        admin.execute("ALTER ROLE wlc_worker RESET search_path")
