// A worker: render invoices, eight at a time, until SIGTERM.
import { PermanentError, runWorker } from '@workload/client';

await runWorker({
  connection: process.env.WORKER_DSN, tenant: 'acme', application: 'billing',
  capabilities: ['pdf'], concurrency: 8,
}, async (invoice, ctx) => {
  if (!('invoice' in invoice)) throw new PermanentError('no invoice number');   // dead-lettered
  return { pages: 3, invoice: invoice.invoice };
});
