// The worker: claims a tenant's workloads and runs a handler for each.
// Claims in batches, each with its workloads' verified execution contexts
// (woken by LISTEN on the tenant's channel, followed when the server renames
// it, with a poll fallback), one heartbeat call for every held claim each
// third of the lease, completions sent together, failures with a kind taken
// from the error, cancellation through an AbortSignal, draining on SIGTERM,
// and the tenant's node followed on Citus.  Every state change is the
// server's decision: the worker reports what happened and acts on the answer.
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import {
  AuthorizationDeniedError, Cancelled, CheckpointTamperedError, FenceError, SecretRejectedError,
  SnapshotMismatchError, TransitionDeniedError, WorkloadError, fromCode, fromPg,
} from './errors.js';
import * as SQL from './sql.js';

const KIND_OF_REFUSAL = [
  [AuthorizationDeniedError, 'authorization_denied'],
  [CheckpointTamperedError, 'checkpoint_tampered'],
  [SnapshotMismatchError, 'snapshot_mismatch'],
];

function kindOf(err) {
  for (const [cls, kind] of KIND_OF_REFUSAL) if (err instanceof cls) return kind;
  return typeof err?.kind === 'string' && err.kind ? err.kind : 'worker_failure';
}

const errorText = (err) => `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`.slice(0, 8000);
// a connection-level failure (no SQLSTATE, or class 08 / admin shutdown)
const isConnectionError = (e) => !(e instanceof TypeError) && (!e?.code || /^(08|57P0)/.test(e.code));

/** One claimed workload, as the handler sees it (ctx). */
class Job {
  constructor(worker, row) {
    this.workloadId = row.workload_id;
    this.claimId = row.claim_id;
    /** a string: bigint, as node-postgres returns it */
    this.fencingToken = row.fencing_token;
    this.leaseExpiresAt = row.lease_expires_at;
    this.attempt = row.attempt;
    this.definitionId = row.definition_id;
    this.definitionRevision = row.definition_revision;
    this.input = row.input;
    this.checkpointSequence = row.checkpoint_sequence;
    /** what workload_execution_context answers for this claim (parsed): capabilities, scopes, attempt id, ... */
    this.executionContext = row.execution_context;
    this.tenant = worker.tenant;
    this.application = worker.application;
    this.workerId = worker.workerId;
    /** workload_resume's whole answer (checkpoint and wake), once resume() ran */
    this.resumed = null;
    this._worker = worker;
    this._controller = new AbortController();
    this._progress = undefined;
    this._cancelRequested = false;
    this._lost = null;
    this._abandoned = false;
    this._claimedAt = performance.now();
  }

  /** Aborted when the handler should stop (cancel requested, claim lost, worker stopped). */
  get signal() { return this._controller.signal; }
  get cancelled() { return this._cancelRequested || this._lost !== null || this._abandoned; }
  /** True when the workload is no longer this worker's (its result would be refused). */
  get lost() { return this._lost !== null; }
  /** The completion's result id: workload_id:attempt. */
  get resultId() { return `${this.workloadId}:${this.attempt}`; }
  /** Seconds since the claim. */
  get elapsed() { return (performance.now() - this._claimedAt) / 1000; }

  throwIfCancelled() {
    if (this.cancelled) throw new Cancelled(`workload ${this.workloadId} was cancelled`);
  }

  /** Progress (small JSON) sent with the next heartbeat, shown by workload_get. */
  progress(value) { this._progress = value; }

  /** Stores state as the next checkpoint (authenticated by the server). */
  checkpoint(state) { return this._worker._checkpoint(this, state); }

  /** The latest verified checkpoint's state, or null; rejects with CheckpointTamperedError. */
  resume() { return this._worker._resume(this); }

  _cancel() {
    this._cancelRequested = true;
    this._abort();
  }

  _lose(err) {
    this._lost ??= err;
    this._abort();
  }

  _abort() {
    if (!this._controller.signal.aborted) this._controller.abort(new Cancelled(`workload ${this.workloadId} was cancelled`));
  }

  _fence() { return [this.tenant, this.workloadId, this.claimId, this.workerId, this.fencingToken]; }
}

/**
 * Runs handler(input, ctx) for workloads of one tenant and application.  The
 * handler's value (JSON; undefined is {}) completes the workload; a thrown
 * error fails it with kind "worker_failure" (retried by the default policy),
 * the kind of a PermanentError or RetryableError, or any error's kind.
 */
export class Worker {
  constructor({
    connection, tenant, application, capabilities = [], concurrency = 1, lease = 30, batch,
    workerId, poll = 5, grace = 30, hooks = {}, expectedSnapshots = null, secretReferences = [],
    poolSize, handleSignals = false, context = true,
  }, handler) {
    if (typeof handler !== 'function') throw new TypeError('a worker needs a handler function');
    if (!(concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
    if (!(lease > 0 && lease <= 86400)) throw new RangeError('lease is seconds, above 0 and at most a day');
    this.base = typeof connection === 'string' ? parseConnectionString(connection) : { ...(connection ?? {}) };
    this.tenant = tenant;
    this.application = application;
    this.capabilities = [...capabilities];
    this.handler = handler;
    this.concurrency = concurrency;
    this.lease = lease;
    this.batch = Math.max(1, Math.min(batch ?? concurrency, 1000));
    this.workerId = workerId ?? `${os.hostname()}:${process.pid}`;
    this.poll = poll;
    this.grace = grace;
    this.hooks = hooks;
    this.expectedSnapshots = expectedSnapshots;
    this.secretReferences = [...secretReferences];
    this.poolSize = poolSize ?? 2 + Math.floor(concurrency / 4);
    this.handleSignals = handleSignals;
    this.context = context;
    this._jobs = new Map();
    this._running = new Map();
    this._handlersRunning = 0;
    this._stopping = false;
    this._closing = false;
    this._woken = false;
    this._waker = null;
    this._hard = null;
    this._target = this.base;
    this._where = null;
    this._claimSql = SQL.claimSql(false);
  }

  /**
   * Stops claiming and lets the running handlers finish (within grace
   * seconds); a second call ends the grace period.
   */
  stop() {
    if (this._stopping) this._hard?.();
    this._stopping = true;
    this._wakeUp();
  }

  async run() {
    const onSignal = () => this.stop();
    if (this.handleSignals) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    this._hardStop = new Promise((resolve) => { this._hard = resolve; });
    try {
      await this._setup();
      this._completer = new Completer(this);
      const listening = this._listen();
      const beats = setInterval(() => this._heartbeat(), (this.lease * 1000) / 3);
      try {
        await this._claimLoop();
        await this._drain();
        await this._completer.flushAll();
      } finally {
        clearInterval(beats);
        this._closing = true;
        this._listener?.end().catch(() => {});
        await listening;
      }
    } finally {
      if (this._pool) await this._pool.end().catch(() => {});
      if (this.handleSignals) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
    }
  }

  // ---- where the tenant is -------------------------------------------------

  _newPool(config) {
    const pool = new pg.Pool({ ...config, max: this.poolSize });
    pool.on('error', (e) => this._hook('error', e));   // an idle connection lost
    return pool;
  }

  async _setup() {
    const c = new pg.Client(this.base);
    c.on('error', () => {});
    await c.connect();
    try {
      this._where = [String(c.host), String(c.port)];
      const node = await this._askNode(c);
      if (node && !this._here(node)) {
        this._target = { ...this.base, host: node[0], port: Number(node[1]) };
        this._where = node;
      }
      // the claim's context names no secret references: with some, they are asked for
      const hasContext = (await c.query(SQL.CLAIM_HAS_CONTEXT)).rows[0].yes;
      this._claimSql = SQL.claimSql(this.context && hasContext && !this.secretReferences.length);
    } finally {
      await c.end().catch(() => {});
    }
    this._pool = this._newPool(this._target);
    this._channel = (await this._call(SQL.CHANNEL, [this.tenant, this.application]))[0].channel;
    this._doneChannel = SQL.doneChannel(this._channel);
  }

  /** workload_tenant_node's answer, or null (one node; a server without it). */
  async _askNode(client) {
    try {
      const { rows } = await client.query(SQL.TENANT_NODE, [this.tenant]);
      return rows.length ? [String(rows[0].host), String(rows[0].port)] : null;
    } catch (e) {
      if (isConnectionError(e)) throw e;
      if (e.code !== '42883') this._hook('error', e);   // 42883: a server before the function
      return null;
    }
  }

  _here(node) {
    const [host, port] = this._where ?? ['', ''];
    return node[1] === port && (node[0] === host || host.startsWith('/'));
  }

  /** Asks again where the tenant is; moves the pool and the listener there when it changed. */
  async _relocate() {
    let node;
    for (const config of [this._target, this.base]) {
      const c = new pg.Client({ ...config, connectionTimeoutMillis: 10000 });
      c.on('error', () => {});
      try {
        await c.connect();
        node = await this._askNode(c);
        break;
      } catch (e) {
        if (config === this.base) throw e;
      } finally {
        await c.end().catch(() => {});
      }
    }
    if (!node || this._here(node)) return false;
    const old = this._pool;
    this._target = { ...this.base, host: node[0], port: Number(node[1]) };
    this._where = node;
    this._pool = this._newPool(this._target);
    this._listener?.end().catch(() => {});   // the listen loop connects to the new node
    old.end().catch(() => {});
    return true;
  }

  // ---- calls ---------------------------------------------------------------

  /**
   * One statement on the pool.  A refusal rejects with its typed error.  A
   * lost connection is retried (after asking where the tenant is now) when
   * resend: every call but the claim is safe to send again.
   */
  async _call(sql, params, { resend = true } = {}) {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this._pool.query(sql, params)).rows;
      } catch (e) {
        const err = fromPg(e);
        if (err !== e) throw err;
        if (isConnectionError(e)) {
          if (!resend || attempt >= 5) throw e;
          this._hook('error', e);
          await delay(Math.min(500 * 2 ** attempt, 10000));
          await this._relocate().catch(() => {});
          continue;
        }
        // not a refusal: if the tenant has moved, the new node answers
        if (resend && attempt === 0 && await this._relocate().catch(() => false)) continue;
        throw e;
      }
    }
  }

  async _fenced(job, sql, ...args) {
    try {
      return await this._call(sql, [...job._fence(), ...args]);
    } catch (e) {
      if (e instanceof FenceError) job._lose(e);
      else if (e instanceof TransitionDeniedError) job._cancel();
      throw e;
    }
  }

  async _checkpoint(job, state) {
    return (await this._fenced(job, SQL.CHECKPOINT, JSON.stringify(state)))[0].v;
  }

  async _resume(job) {
    const snap = this.expectedSnapshots == null ? null : JSON.stringify(this.expectedSnapshots);
    job.resumed = (await this._fenced(job, SQL.RESUME, snap))[0].v;
    return job.resumed?.checkpoint ? job.resumed.checkpoint.state : null;
  }

  _hook(name, ...args) {
    const fn = this.hooks[name];
    if (!fn) {
      if (name === 'error') console.error(`workload worker ${this.workerId}:`, args[0]?.message ?? args[0]);
      return;
    }
    try {
      fn(...args);
    } catch (e) {
      console.error(`workload worker ${this.workerId}: the ${name} hook threw:`, e);
    }
  }

  // ---- claiming --------------------------------------------------------------

  _wakeUp() {
    this._woken = true;
    const w = this._waker;
    this._waker = null;
    w?.(true);
  }

  /** Until woken (a notification, a finished job, stop) or ms: whether woken. */
  _sleep(ms) {
    if (this._woken) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = ms == null ? null : setTimeout(() => { this._waker = null; resolve(false); }, ms);
      this._waker = (v) => { if (t) clearTimeout(t); resolve(v); };
    });
  }

  async _claimLoop() {
    let backoff = 0.25;
    while (!this._stopping) {
      this._woken = false;
      const free = this.concurrency - this._jobs.size;
      if (free <= 0) {   // every slot busy: until a job ends (or stop)
        await this._sleep(null);
        continue;
      }
      const want = Math.min(free, this.batch);
      let rows;
      try {
        rows = await this._call(this._claimSql, [this.workerId, this.capabilities, this.tenant,
          this.application, `${this.lease} seconds`, want], { resend: false });
      } catch (e) {
        if (e instanceof WorkloadError || !isConnectionError(e)) throw e;
        this._hook('error', e);   // a claim that committed comes back through recovery
        await delay(backoff * 1000);
        backoff = Math.min(backoff * 2, this.poll);
        continue;
      }
      if (rows.length && rows[0].execution_context == null) await this._withContexts(rows);
      for (const row of rows) this._start(row);
      if (rows.length) backoff = 0.25;
      if (rows.length === want) continue;   // maybe more: claim again when a slot is free
      if (await this._sleep(backoff * 1000)) {
        backoff = 0.25;
        continue;
      }
      backoff = Math.min(backoff * 2, this.poll);
      if (backoff >= this.poll) {   // a quiet round: is the tenant still on this node?
        await this._relocate().catch((e) => this._hook('error', e));
      }
    }
  }

  /**
   * Adds the execution contexts to claimed rows, asked for in one statement
   * (a claim without context).  When that is refused (one item's authority
   * lapsed, say), the rows go without, and each job asks for its own.
   */
  async _withContexts(rows) {
    const items = JSON.stringify(rows.map((r) => ({ workload_id: r.workload_id, claim_id: r.claim_id, fencing_token: Number(r.fencing_token) })));
    try {
      const got = new Map((await this._call(SQL.EXECUTION_CONTEXTS, [this.tenant, this.workerId, this.secretReferences, items]))
        .map((r) => [r.workload_id, r.v]));
      for (const r of rows) r.execution_context = got.get(r.workload_id) ?? null;
    } catch (e) {
      if (!(e instanceof WorkloadError) && isConnectionError(e)) this._hook('error', e);
    }
  }

  /**
   * LISTENs on the tenant's channel on a connection of its own, again after a
   * loss or a move, and wakes the claim loop on each notification.  When the
   * server says it renamed the channel, it LISTENs on the new name, and
   * completions are announced on the new done channel.
   */
  async _listen() {
    let backoff = 500;
    while (!this._closing) {
      const c = new pg.Client(this._target);
      this._listener = c;
      const ended = new Promise((resolve) => { c.on('error', resolve); c.on('end', resolve); });
      try {
        await c.connect();
        let following = Promise.resolve();
        c.on('notification', (n) => {
          if (n.payload !== SQL.CHANNEL_ROTATED) return this._wakeUp();
          following = following.then(() => this._follow(c, this._channel)).catch((e) => {
            if (!this._closing) this._hook('error', e);
            c.end().catch(() => {});   // connect and ask again
          });
        });
        await this._follow(c, null);
        backoff = 500;
        const e = await ended;
        if (e instanceof Error && !this._closing) this._hook('error', e);
      } catch (e) {
        if (!this._closing) this._hook('error', e);
      } finally {
        await c.end().catch(() => {});
      }
      if (this._closing) return;
      await delay(backoff);
      backoff = Math.min(backoff * 2, 10000);
    }
  }

  /**
   * Moves the listener c to the channel's current name (from listened, the
   * name it LISTENs on, or null on a new connection), then wakes the claim
   * loop for what became READY under that name before its LISTEN.
   */
  async _follow(c, listened) {
    let channel;
    try {
      channel = await SQL.follow(c, this.tenant, this.application, listened);
    } catch (e) {
      throw fromPg(e);
    }
    this._channel = channel;
    this._doneChannel = SQL.doneChannel(channel);
    this._wakeUp();
  }

  // ---- one job -----------------------------------------------------------------

  _start(row) {
    const job = new Job(this, row);
    this._jobs.set(job.workloadId, job);
    const p = this._runJob(job).finally(() => {
      this._jobs.delete(job.workloadId);
      this._running.delete(job.workloadId);
      this._wakeUp();
    });
    this._running.set(job.workloadId, p);
  }

  async _runJob(job) {
    try {
      this._hook('claimed', job);
      this._handlersRunning++;
      let output;
      try {
        if (job.executionContext == null) {
          job.executionContext = (await this._fenced(job, SQL.EXECUTION_CONTEXT, this.secretReferences))[0].v;
        }
        output = await this.handler(job.input, job);
      } catch (e) {
        this._handlerFinished();
        if (!job._abandoned) await this._afterError(job, e);
        return;
      }
      this._handlerFinished();
      if (job._abandoned) return;
      if (job._lost) this._hook('lost', job, job._lost);
      else if (job._cancelRequested) await this._confirm(job);
      else await this._complete(job, output);
    } catch (e) {   // a report that could not be sent: the lease runs out
      this._hook('error', e);
    }
  }

  _handlerFinished() {
    this._handlersRunning--;
    this._completer.handlerDone();
  }

  async _afterError(job, err) {
    if (job._lost || err instanceof FenceError) {
      this._hook('lost', job, job._lost ?? err);
      return;
    }
    if (job._cancelRequested || err instanceof Cancelled || err instanceof TransitionDeniedError) {
      if (await this._confirm(job)) return;
    }
    await this._fail(job, kindOf(err), errorText(err));
  }

  async _fail(job, kind, text) {
    for (let i = 0; i < 2; i++) {
      try {
        const rows = await this._fenced(job, SQL.FAIL, kind, text, this._doneChannel);
        this._hook('failed', job, kind, text, rows[0].v);
        return;
      } catch (e) {
        if (e instanceof SecretRejectedError) {
          text = `${kind}: the error text was refused as a secret`;
          continue;
        }
        if (e instanceof FenceError) return this._hook('lost', job, e);
        if (e instanceof TransitionDeniedError) return void await this._confirm(job);
        throw e;
      }
    }
  }

  /** Confirms a requested cancellation; false when none was requested. */
  async _confirm(job) {
    try {
      await this._fenced(job, SQL.CONFIRM_CANCEL, this._doneChannel);
    } catch (e) {
      if (e instanceof TransitionDeniedError) {
        job._cancelRequested = false;
        return false;
      }
      if (e instanceof FenceError) {
        this._hook('lost', job, e);
        return true;
      }
      throw e;
    }
    this._hook('cancelled', job);
    return true;
  }

  async _complete(job, output) {
    if (output === undefined || output === null) output = {};
    let text;
    try {
      text = JSON.stringify(output);
      if (text === undefined) throw new TypeError(`${typeof output} is not JSON`);
    } catch (e) {
      return this._fail(job, 'invalid_output', `the handler's value is not JSON: ${e.message}`);
    }
    const { outcome, code, result } = await this._completer.complete(job, text);
    if (outcome === 'succeeded') this._hook('succeeded', job, output);
    else if (outcome === 'completion_criteria_unmet') {
      this._hook('failed', job, 'completion_criteria_unmet', result?.reason ?? '', 'DEAD_LETTER');
    } else if (SQL.FENCE_CODES.has(code)) this._hook('lost', job, fromCode(code));
    else if (code === 'WORKLOAD_TRANSITION_DENIED') {
      job._cancelRequested = true;
      if (!await this._confirm(job)) await this._fail(job, 'invalid_output', `${code}: the completion was refused`);
    } else await this._fail(job, 'invalid_output', `${code}: the output was refused`);
  }

  /**
   * After stop: the running handlers get grace seconds (a second stop ends
   * it); what still runs then is failed as worker_failure and abandoned.
   */
  async _drain() {
    if (this._running.size) {
      let timer;
      await Promise.race([
        Promise.allSettled([...this._running.values()]),
        this._hardStop,
        new Promise((resolve) => { timer = setTimeout(resolve, this.grace * 1000); }),
      ]);
      clearTimeout(timer);
    }
    for (const job of [...this._jobs.values()]) {
      job._abandoned = true;
      job._abort();
      this._jobs.delete(job.workloadId);
      await this._fail(job, 'worker_failure', 'the worker was stopped before the handler returned')
        .catch((e) => this._hook('error', e));
    }
  }

  // ---- heartbeats ------------------------------------------------------------------

  async _heartbeat() {
    if (this._beating) return;
    const jobs = [...this._jobs.values()].filter((j) => !j._lost && !j._abandoned);
    if (!jobs.length) return;
    this._beating = true;
    const extend = `${this.lease} seconds`;
    try {
      const sent = new Map(jobs.map((j) => [j.workloadId, j._progress]));
      const items = jobs.map((j) => ({
        workload_id: j.workloadId, claim_id: j.claimId, fencing_token: Number(j.fencingToken),
        ...(j._progress !== undefined ? { progress: j._progress } : {}),
      }));
      const rows = await this._call(SQL.HEARTBEAT_MANY, [this.tenant, this.workerId, JSON.stringify(items), extend]);
      for (const r of rows) {
        const job = this._jobs.get(r.workload_id);
        if (!job) continue;
        if (r.outcome === 'extended') {
          if (job._progress === sent.get(r.workload_id)) job._progress = undefined;
          if (r.answer?.cancellation_requested) job._cancel();
        } else if (SQL.FENCE_CODES.has(r.code)) job._lose(fromCode(r.code));
        else if (r.code === 'WORKLOAD_SECRET_REJECTED') {   // the progress: drop it, extend alone
          job._progress = undefined;
          try {
            const a = (await this._fenced(job, SQL.HEARTBEAT, extend, null))[0].v;
            if (a?.cancellation_requested) job._cancel();
          } catch (e) {
            this._hook('error', e);
          }
        } else this._hook('error', fromCode(r.code));
      }
    } catch (e) {
      this._hook('error', e);
    } finally {
      this._beating = false;
    }
  }
}

/**
 * Sends the completions of handlers that return close together in one
 * workload_complete_many call (each item decided on its own), waiting up to
 * 20 ms for others while other handlers still run.
 */
class Completer {
  constructor(worker) {
    this.w = worker;
    this.pending = [];
    this.flushing = null;
    this.more = null;
  }

  handlerDone() {
    const m = this.more;
    this.more = null;
    m?.();
  }

  complete(job, outputText) {
    const item = `{"workload_id":${JSON.stringify(job.workloadId)},"claim_id":${JSON.stringify(job.claimId)},` +
      `"fencing_token":${Number(job.fencingToken)},"result_id":${JSON.stringify(job.resultId)},"output":${outputText}}`;
    return new Promise((resolve, reject) => {
      this.pending.push({ job, item, outputText, resolve, reject });
      this.flushing ??= this.gatherAndFlush().finally(() => { this.flushing = null; });
    });
  }

  async gatherAndFlush() {
    const end = Date.now() + 20;
    while (this.w._handlersRunning > 0 && this.pending.length < 100 && Date.now() < end) {
      let timer;
      await new Promise((resolve) => {
        this.more = resolve;
        timer = setTimeout(resolve, end - Date.now());
      });
      clearTimeout(timer);
    }
    await this.flushAll();
  }

  async flushAll() {
    while (this.pending.length) await this.send(this.pending.splice(0, 100));
  }

  async send(batch) {
    const w = this.w;
    let rows;
    try {
      rows = await w._call(SQL.COMPLETE_MANY, [w.tenant, w.workerId, `[${batch.map((b) => b.item).join(',')}]`, w._doneChannel]);
    } catch (e) {
      if (e instanceof WorkloadError) {   // refused whole (a size limit): one by one
        for (const b of batch) await this.sendOne(b);
      } else for (const b of batch) b.reject(e);
      return;
    }
    const answers = new Map(rows.map((r) => [r.workload_id, r]));
    for (const b of batch) {
      const r = answers.get(b.job.workloadId);
      b.resolve(r ? { outcome: r.outcome, code: r.code, result: r.result } : { outcome: 'refused', code: 'WORKLOAD_INVALID', result: null });
    }
  }

  async sendOne(b) {
    const w = this.w;
    try {
      const rows = await w._call(SQL.COMPLETE, [...b.job._fence(), b.job.resultId, b.outputText, w._doneChannel]);
      b.resolve({ outcome: rows[0].v?.outcome ?? 'succeeded', code: null, result: rows[0].v });
    } catch (e) {
      if (e instanceof WorkloadError) b.resolve({ outcome: 'refused', code: e.code, result: null });
      else b.reject(e);
    }
  }
}

/**
 * Runs a worker until SIGTERM or SIGINT, then drains and resolves.  Options:
 * connection (a connection string or pg config; default the PG* environment),
 * tenant, application, capabilities, concurrency (1), lease seconds (30;
 * heartbeats every third), batch (claims per call, default concurrency),
 * workerId, poll (longest sleep between claims without a notification, 5 s),
 * grace (seconds the running handlers get after SIGTERM, 30), hooks,
 * expectedSnapshots, secretReferences, poolSize, context (true: each claim
 * hands out its workloads' execution contexts; false: they are asked for in
 * a second statement).
 */
export async function runWorker(options, handler) {
  await new Worker({ handleSignals: true, ...options }, handler).run();
}
