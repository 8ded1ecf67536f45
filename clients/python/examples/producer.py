# A producer: create a workload and wait for its result.
import json
import os

from workload import Client

client = Client(os.environ["APP_DSN"], "acme", "billing",
                grant=json.loads(os.environ["BILLING_GRANT"]))  # signed by an admin
doc = client.create("invoice.render", {"invoice": 42}, key="invoice-42", capabilities=["pdf"])
done = client.wait(doc["workload_id"], timeout=60)
print(done["state"], done["result"]["output"])
