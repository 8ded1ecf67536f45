"""When the admin removes a member from the tenant, the server renames the
tenant's channel and says so on the old name: a running worker and a waiting
client (sync and asyncio) LISTEN on the new name and go on being woken by
notifications, not by their poll fallback.

Without a notification, the worker claims and a wait reads the document
after 0.25, 0.5, 1, 2, 4, 8, ... seconds of quiet (doubling up to ``poll``,
here 30), counted from the last wake-up.  So what happens 9 s after the
rename (its own wake-up) and is noticed within 3 s was noticed through a
notification: the next poll would be 15.75 s after the rename."""

import asyncio
import threading
import time

import workload
from conftest import APP, dsn, wait_for

QUIET = 9     # seconds after the rename: between the polls at 7.75 s and 15.75 s
PROMPT = 3    # a notification is noticed well within this; the next poll is 6.75 s away



def channel(admin, tenant):
    return admin.execute("SELECT workload_channel(%s, %s)", (tenant, APP)).fetchone()[0]


def rename(admin, tenant):
    """Removes the other member; answers when (monotonic) the rename committed."""
    before = channel(admin, tenant)
    admin.execute("SELECT workload_remove_tenant_member('wlc_other', %s, %s)", (tenant, APP))
    at = time.monotonic()
    assert channel(admin, tenant) != before, "the channel was not renamed"
    return at


def test_a_running_worker_follows_the_renamed_channel(admin, tenant, client, start_worker):
    admin.execute("SELECT workload_add_tenant_member('wlc_other', %s, %s)", (tenant, APP))
    claimed, ended = {}, {}

    def handler(inp, ctx):
        time.sleep(inp["sleep"])
        ended[ctx.workload_id] = time.monotonic()
        return {}

    w = start_worker(handler, poll=30, lease=30,
                     hooks=workload.Hooks(claimed=lambda j: claimed.setdefault(
                         j.workload_id, time.monotonic())))
    first = client.create("r.first", {"sleep": 0}, key="first")["workload_id"]
    wait_for(lambda: client.get(first)["state"] == "SUCCEEDED")
    renamed_at = rename(admin, tenant)
    time.sleep(max(0.0, renamed_at + QUIET - time.monotonic()))
    t0 = time.monotonic()
    second = client.create("r.second", {"sleep": 5}, key="second")["workload_id"]
    wait_for(lambda: second in claimed)
    assert claimed[second] - t0 < PROMPT, f"claimed {claimed[second] - t0:.1f} s after its create"
    # its completion is announced on the new done channel: a wait that started with the
    # handler (whose reads come at 3.75 and 7.75 s) ends as the handler returns at 5 s
    done = client.wait(second, timeout=20, poll=30)
    returned = time.monotonic()
    w.stop()
    assert done["state"] == "SUCCEEDED"
    assert returned - ended[second] < 1.5, f"the wait ended {returned - ended[second]:.1f} s late"


def test_waits_follow_the_renamed_channel(admin, tenant, grant, client, start_worker):
    admin.execute("SELECT workload_add_tenant_member('wlc_other', %s, %s)", (tenant, APP))
    wid = client.create("r.wait", {}, key="wait")["workload_id"]
    ended = {}

    def sync_wait():
        with workload.Client(dsn("APP"), tenant, APP) as c:
            ended["sync"] = (c.wait(wid, timeout=60, poll=30)["state"], time.monotonic())

    def async_wait():
        async def main():
            async with await workload.AsyncClient.connect(dsn("APP"), tenant, APP) as c:
                return (await c.wait(wid, timeout=60, poll=30))["state"]
        ended["async"] = (asyncio.run(main()), time.monotonic())

    threads = [threading.Thread(target=f, daemon=True) for f in (sync_wait, async_wait)]
    for t in threads:
        t.start()
    time.sleep(1)  # both LISTEN
    renamed_at = rename(admin, tenant)
    time.sleep(max(0.0, renamed_at + QUIET - time.monotonic()))
    t0 = time.monotonic()
    w = start_worker(lambda inp, ctx: {})  # it asks for the channel's name at its start
    for t in threads:
        t.join(60)
    w.stop()
    assert set(ended) == {"sync", "async"}
    for how, (state, at) in ended.items():
        assert state == "SUCCEEDED"
        assert at - t0 < PROMPT, f"the {how} wait ended {at - t0:.1f} s after the worker started"
