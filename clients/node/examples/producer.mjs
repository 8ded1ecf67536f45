// A producer: create a workload and wait for its result.
import { Client } from '@workload/client';

const client = new Client({
  connection: process.env.APP_DSN, tenant: 'acme', application: 'billing',
  grant: JSON.parse(process.env.BILLING_GRANT ?? ''),   // signed by an admin
});
const doc = await client.create('invoice.render', { invoice: 42 }, { key: 'invoice-42', capabilities: ['pdf'] });
const done = await client.wait(doc.workload_id, { timeout: 60 });
console.log(done.state, JSON.stringify(done.result.output));
await client.close();
