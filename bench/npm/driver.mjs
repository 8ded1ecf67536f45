// bench/npm/driver.mjs: pg-boss and Graphile Worker for `bench/run.sh anchors`.
//
//   node driver.mjs setup pgboss|graphile CONNSTRING COUNT
//       installs the library's schema and preloads COUNT no-op jobs (payload
//       {"n": i}, priority i % 4, like bench.q and bench.create_range); prints
//       "setup seconds=S".
//   node driver.mjs run pgboss|graphile CONNSTRING WORKERS SECONDS
//       starts WORKERS concurrent workers on that queue, each configured as the
//       library documents for throughput (see bench/README.md, "anchors"), and
//       prints "ready" once they run; SECONDS later it stops them gracefully
//       (batched completions are flushed) and prints
//       "summary handled=H errors=E batches=B".
//
// The handler is a no-op that returns at once.  Completed jobs are counted by
// bench/run.sh from each library's own tables, not from these counters; the
// counters are a cross-check printed into the log.
import { PgBoss } from 'pg-boss';
import { run, runMigrations, makeWorkerUtils, Logger } from 'graphile-worker';

const QUEUE = 'bench';		// the pg-boss queue name
const TASK = 'noop';		// the Graphile Worker task identifier
const CHUNK = 10000;		// jobs per insert call while preloading

const [mode, system, conn, arg1, arg2] = process.argv.slice(2);
const usage = () => {
	console.error('usage: driver.mjs setup pgboss|graphile CONN COUNT | run pgboss|graphile CONN WORKERS SECONDS');
	process.exit(2);
};
if (!['setup', 'run'].includes(mode) || !['pgboss', 'graphile'].includes(system) || !conn) usage();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let errors = 0;
const noteError = (what, err) => {
	errors++;
	if (errors <= 5) console.error(`error (${what}): ${err?.message ?? err}`);
};

function jobsOf(lo, hi, make) {
	const out = [];
	for (let i = lo; i <= hi; i++) out.push(make(i));
	return out;
}

// pg-boss: one instance; the worker-only instance does no maintenance and no
// scheduling (supervise/schedule off), so nothing but the workers runs during
// a measurement.  migrate is on for setup (it creates the schema), off for run.
function pgboss(opts) {
	const boss = new PgBoss({ connectionString: conn, supervise: false, schedule: false, ...opts });
	boss.on('error', (e) => noteError('pg-boss', e));
	return boss;
}

async function setupPgboss(count) {
	const boss = pgboss({});
	await boss.start();
	await boss.createQueue(QUEUE);
	for (let lo = 1; lo <= count; lo += CHUNK) {
		const hi = Math.min(count, lo + CHUNK - 1);
		await boss.insert(QUEUE, jobsOf(lo, hi, (i) => ({ data: { n: i }, priority: i % 4 })));
	}
	await boss.stop({ graceful: false });
}

async function runPgboss(workers, seconds) {
	// Pool: one connection per worker plus two for the instance's own queries.
	const boss = pgboss({ migrate: false, max: workers + 2 });
	await boss.start();
	let handled = 0, batches = 0;
	// The batched worker: each of `workers` loops fetches up to 10 jobs in one
	// statement and, when the handler returns, completes all of them in one
	// statement.  burstWhenBatchFull: fetch again at once while batches come
	// back full (without it a worker sleeps pollingIntervalSeconds, >= 0.5 s,
	// between fetches).
	await boss.work(QUEUE, { batchSize: 10, localConcurrency: workers, burstWhenBatchFull: true },
		async (jobs) => { handled += jobs.length; batches++; });
	console.log('ready');
	await sleep(seconds * 1000);
	await boss.stop({ graceful: true, wait: true, timeout: 30000 });
	return { handled, batches };
}

function graphileLogger() {
	// Graphile Worker logs every job at info level; the log would cost more CPU
	// than the job.  Warnings and errors are still counted.
	return new Logger(() => (level, message) => {
		if (level === 'error') noteError('graphile-worker', message);
		else if (level === 'warning') console.error(`warning (graphile-worker): ${message}`);
	});
}

async function setupGraphile(count) {
	const logger = graphileLogger();
	await runMigrations({ connectionString: conn, logger });
	const utils = await makeWorkerUtils({ connectionString: conn, logger });
	for (let lo = 1; lo <= count; lo += CHUNK) {
		const hi = Math.min(count, lo + CHUNK - 1);
		await utils.addJobs(jobsOf(lo, hi, (i) => ({ identifier: TASK, payload: { n: i }, priority: i % 4 })));
	}
	await utils.release();
}

async function runGraphile(workers, seconds) {
	let handled = 0;
	// The configuration of https://worker.graphile.org/docs/performance (its
	// "quick stats" run) with concurrentJobs = workers: the pool fetches and
	// locks 500 jobs at a time into a local queue that the workers drain, and
	// completions are batched (completeJobBatchDelay 0: every completion made
	// in one tick of the event loop goes in one complete_jobs call).
	const runner = await run({
		noHandleSignals: true,
		logger: graphileLogger(),
		taskList: { [TASK]: async () => { handled++; } },
		preset: {
			worker: {
				connectionString: conn,
				concurrentJobs: workers,
				maxPoolSize: workers + 1,
				localQueue: { size: 500 },
				completeJobBatchDelay: 0,
				failJobBatchDelay: 0,
			},
		},
	});
	runner.events.on('job:error', ({ error }) => noteError('job', error));
	console.log('ready');
	await sleep(seconds * 1000);
	await runner.stop();
	return { handled, batches: 0 };
}

try {
	const t0 = performance.now();
	if (mode === 'setup') {
		const count = Number(arg1);
		if (!Number.isInteger(count) || count < 1) usage();
		await (system === 'pgboss' ? setupPgboss(count) : setupGraphile(count));
		console.log(`setup seconds=${((performance.now() - t0) / 1000).toFixed(3)}`);
	} else {
		const workers = Number(arg1), seconds = Number(arg2);
		if (!Number.isInteger(workers) || workers < 1 || !(seconds > 0)) usage();
		const r = await (system === 'pgboss' ? runPgboss(workers, seconds) : runGraphile(workers, seconds));
		console.log(`summary handled=${r.handled} errors=${errors} batches=${r.batches}`);
	}
	process.exit(errors > 0 && mode === 'setup' ? 1 : 0);
} catch (err) {
	console.error(`driver failed: ${err?.stack ?? err}`);
	process.exit(1);
}
