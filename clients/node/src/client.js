// The producer's side: create, read, cancel, retry, redrive, schedules, and
// wait for a workload to finish.  One SQL call per method over a pg.Pool;
// refusals reject with the typed errors of errors.js.
import pg from 'pg';
import { fromCode, fromPg } from './errors.js';
import { spec as makeSpec } from './grants.js';
import * as SQL from './sql.js';

const json = (v) => JSON.stringify(v);

export class Client {
  /**
   * @param {object} options connection (a connection string, a pg.Pool, or a
   *   pg.PoolConfig), tenant, application, grant (the signed grant specs are
   *   created under unless a call names another), environment
   */
  constructor({ connection, tenant, application, grant, environment = 'default' }) {
    this.tenant = tenant;
    this.application = application;
    this.grant = grant;
    this.environment = environment;
    this.ownPool = !(connection instanceof pg.Pool);
    this.pool = this.ownPool
      ? new pg.Pool(typeof connection === 'string' ? { connectionString: connection } : (connection ?? {}))
      : connection;
    this.config = this.ownPool
      ? (typeof connection === 'string' ? { connectionString: connection } : (connection ?? {}))
      : connection.options;
  }

  async close() {
    if (this.ownPool) await this.pool.end();
  }

  async rows(sql, params) {
    try {
      return (await this.pool.query(sql, params)).rows;
    } catch (e) {
      throw fromPg(e);
    }
  }

  async one(sql, params) {
    return (await this.rows(sql, params))[0].v;
  }

  /** A create spec in this client's tenant and application, under its grant. */
  spec(definitionId, input, { key, grant = this.grant, environment = this.environment, ...rest } = {}) {
    if (!grant) throw new TypeError('no grant: pass grant here or to the Client');
    return makeSpec({ tenant: this.tenant, application: this.application, definitionId, input, key, grant, environment, ...rest });
  }

  /** A schedule's template: a spec without tenant, application and idempotency key. */
  template(definitionId, input, options = {}) {
    const { tenant_id, application_id, idempotency_key, ...t } = this.spec(definitionId, input, { ...options, key: '-' });
    return t;
  }

  /**
   * Creates a workload: create(spec) or create(definitionId, input, {key, ...}).
   * Resolves to its document; the same key again resolves to the same workload.
   */
  async create(what, input, options) {
    const s = typeof what === 'string' ? this.spec(what, input, options) : what;
    return this.one('SELECT workload_create($1::jsonb) AS v', [json(s)]);
  }

  /** Up to 1000 specs in one transaction, each decided on its own. */
  async createMany(specs) {
    const rows = await this.rows(
      'SELECT ord, workload_id, outcome, code, document FROM workload_create_many($1::jsonb)', [json(specs)]);
    return rows.map((r) => ({
      ord: r.ord, workloadId: r.workload_id, outcome: r.outcome, code: r.code, document: r.document,
      error: r.code ? fromCode(r.code) : null,
    }));
  }

  get(workloadId) {
    return this.one('SELECT workload_get($1) AS v', [workloadId]);
  }

  async list({ state = null, limit = 100 } = {}) {
    return (await this.rows('SELECT workload_list($1, $2, $3::workload_state, $4) AS v',
      [this.tenant, this.application, state, limit])).map((r) => r.v);
  }

  stats() {
    return this.one('SELECT workload_stats($1, $2) AS v', [this.tenant, this.application]);
  }

  /** Cancels it, or requests its cancellation while a worker runs it; resolves to the new state. */
  cancel(workloadId, actor) {
    return this.one('SELECT workload_cancel($1, $2)::text AS v', [workloadId, actor]);
  }

  /** A FAILED, TIMED_OUT or DEAD_LETTER workload back to READY, due now. */
  retry(workloadId, actor) {
    return this.one('SELECT workload_retry($1, $2)::text AS v', [workloadId, actor]);
  }

  /** Retries up to limit dead letters (oldest first); resolves to their ids. */
  async redrive(actor, { definitionId = null, failureKind = null, limit = 1000 } = {}) {
    return (await this.rows('SELECT workload_redrive($1, $2, $3, $4, $5, $6) AS v',
      [this.tenant, this.application, actor, definitionId, failureKind, limit])).map((r) => r.v);
  }

  signal(wakeKey, payload) {
    return this.one('SELECT workload_signal($1, $2, $3, $4::jsonb) AS v',
      [this.tenant, this.application, wakeKey, json(payload)]);
  }

  /** Creates or replaces a schedule (template: see template()). */
  schedule(scheduleId, cron, template, { timezone = 'UTC', overlap = 'skip', catchUp = 'latest' } = {}) {
    return this.one('SELECT workload_schedule($1, $2, $3, $4, $5::jsonb, $6, $7, $8) AS v',
      [this.tenant, this.application, scheduleId, cron, json(template), timezone, overlap, catchUp]);
  }

  async schedules() {
    return (await this.rows('SELECT workload_schedules($1, $2) AS v', [this.tenant, this.application])).map((r) => r.v);
  }

  pauseSchedule(scheduleId) {
    return this.one('SELECT workload_schedule_pause($1, $2, $3) AS v', [this.tenant, this.application, scheduleId]);
  }

  resumeSchedule(scheduleId) {
    return this.one('SELECT workload_schedule_resume($1, $2, $3) AS v', [this.tenant, this.application, scheduleId]);
  }

  async dropSchedule(scheduleId) {
    await this.rows('SELECT workload_schedule_drop($1, $2, $3)', [this.tenant, this.application, scheduleId]);
  }

  /** Signs a grant body (see grant()); needs a role with workload_admin. */
  signGrant(body) {
    return this.one('SELECT workload_sign_grant($1::jsonb) AS v', [json(body)]);
  }

  /**
   * Resolves to the document once the workload is SUCCEEDED, CANCELLED or
   * DEAD_LETTER.  It listens for the workload's finish on a connection of its
   * own and reads the document when woken; also every poll seconds at most,
   * for finishes nobody announced (a timeout the tick enforced, say).  When
   * the server renames the tenant's channel, it listens on the new name.
   * Rejects with a TimeoutError after timeout seconds.
   */
  async wait(workloadId, { timeout, poll = 5 } = {}) {
    const deadline = timeout === undefined ? Infinity : Date.now() + timeout * 1000;
    const listener = new pg.Client(this.config);
    await listener.connect();
    let channel = null;
    let notified = false;
    let failure = null;
    let wake = null;
    let following = Promise.resolve();
    listener.on('notification', (n) => {
      if (n.payload === SQL.CHANNEL_ROTATED) {
        following = following
          .then(async () => { channel = await SQL.follow(listener, this.tenant, this.application, channel, { done: true }); })
          .catch((e) => { failure = fromPg(e); })
          .finally(() => {   // a finish announced on the new name before its LISTEN: read again
            notified = true;
            wake?.();
          });
      } else if (n.channel === SQL.doneChannel(channel) && n.payload === workloadId) {
        // (on the tenant's channel the same id only says it became READY)
        notified = true;
        wake?.();
      }
    });
    listener.on('error', () => wake?.());
    try {
      channel = await SQL.follow(listener, this.tenant, this.application, null, { done: true });
      let backoff = 0.25;
      for (;;) {
        if (failure) throw failure;
        notified = false;
        const doc = await this.get(workloadId);
        if (SQL.FINAL_STATES.has(doc.state)) return doc;
        const left = deadline - Date.now();
        if (left <= 0) {
          const e = new Error(`workload ${workloadId} is still ${doc.state}`);
          e.name = 'TimeoutError';
          throw e;
        }
        if (!notified) {
          let timer;
          await new Promise((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, Math.min(backoff * 1000, left));
          });
          clearTimeout(timer);
          wake = null;
        }
        backoff = notified ? 0.25 : Math.min(backoff * 2, poll);
      }
    } catch (e) {
      throw fromPg(e);
    } finally {
      await listener.end().catch(() => {});
    }
  }
}
