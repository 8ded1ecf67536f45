// Types of @workload/client (written by hand; the tests check them with tsc).
import type { Pool, PoolConfig, ClientConfig } from 'pg';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Doc = { [key: string]: any };
export type Principal = string | { kind: 'agent' | 'human' | 'service' | 'workload'; id: string };
export type State =
  | 'CREATED' | 'READY' | 'CLAIMED' | 'RUNNING' | 'CHECKPOINTED' | 'RECOVERING'
  | 'CANCELLATION_REQUESTED' | 'WAITING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED'
  | 'TIMED_OUT' | 'DEAD_LETTER';

/** The grant body workload_sign_grant signs (docs/grants.md). */
export interface Grant {
  contract_version: number;
  id: string;
  issuer: { kind: string; id: string };
  subject: { kind: string; id: string };
  tenant_id: string;
  application_id: string;
  capabilities: string[];
  resources: string[];
  constraints: { subject_attributes: { [key: string]: Json } };
  issued_at: string;
  expires_at: string;
  parent_grant: string | null;
  revision: number;
  status: 'active' | 'suspended' | 'revoked';
}

/** What workload_sign_grant answers: the value a spec's authorization_snapshot is. */
export interface SignedGrant {
  grant: Grant;
  key_id: string;
  signature: string;
}

export interface GrantOptions {
  tenant: string;
  application: string;
  subject: Principal;
  capabilities?: string[];
  ttlSeconds?: number;
  databaseRole?: string;
  issuer?: Principal;
  id?: string;
  resources?: string[];
  parentGrant?: string | null;
  revision?: number;
  notBefore?: Date;
  subjectAttributes?: { [key: string]: Json };
}
export function grant(options: GrantOptions): Grant;
export function principal(value: Principal): { kind: string; id: string };

export interface SpecOptions {
  key: string;
  grant?: SignedGrant;
  requestedBy?: Principal;
  environment?: string;
  definitionRevision?: string;
  trigger?: string;
  capabilities?: string[];
  /** any other spec field as the SQL API names it: priority, retry_policy, timeouts, ... */
  fields?: { [field: string]: Json };
}
export function spec(options: SpecOptions & {
  tenant: string; application: string; definitionId: string; input: Json; grant: SignedGrant;
}): Doc;

export interface Created {
  ord: number;
  workloadId: string | null;
  outcome: 'created' | 'existing' | 'refused';
  code: string | null;
  document: Doc | null;
  /** the refusal as its typed error (not thrown), or null */
  error: WorkloadError | null;
}

export class Client {
  constructor(options: {
    connection?: string | Pool | PoolConfig;
    tenant: string;
    application: string;
    grant?: SignedGrant;
    environment?: string;
  });
  readonly tenant: string;
  readonly application: string;
  close(): Promise<void>;
  spec(definitionId: string, input: Json, options: SpecOptions): Doc;
  template(definitionId: string, input: Json, options?: Omit<SpecOptions, 'key'>): Doc;
  create(spec: Doc): Promise<Doc>;
  create(definitionId: string, input: Json, options: SpecOptions): Promise<Doc>;
  createMany(specs: Doc[]): Promise<Created[]>;
  get(workloadId: string): Promise<Doc>;
  list(options?: { state?: State | null; limit?: number }): Promise<Doc[]>;
  stats(): Promise<Doc>;
  cancel(workloadId: string, actor: string): Promise<State>;
  retry(workloadId: string, actor: string): Promise<State>;
  redrive(actor: string, options?: { definitionId?: string | null; failureKind?: string | null; limit?: number }): Promise<string[]>;
  signal(wakeKey: string, payload: Json): Promise<number>;
  schedule(scheduleId: string, cron: string, template: Doc,
    options?: { timezone?: string; overlap?: 'skip' | 'allow'; catchUp?: 'latest' | 'all' | 'none' }): Promise<Doc>;
  schedules(): Promise<Doc[]>;
  pauseSchedule(scheduleId: string): Promise<Doc>;
  resumeSchedule(scheduleId: string): Promise<Doc>;
  dropSchedule(scheduleId: string): Promise<void>;
  signGrant(grant: Grant): Promise<SignedGrant>;
  /** Resolves once SUCCEEDED, CANCELLED or DEAD_LETTER; woken by LISTEN. */
  wait(workloadId: string, options?: { timeout?: number; poll?: number }): Promise<Doc>;
}

/** What workload_execution_context answers for a claim: what the run may use, verified by the server. */
export interface ExecutionContext {
  workload_id: string;
  tenant_id: string;
  application_id: string;
  definition_id: string;
  definition_revision: string;
  environment: string;
  attempt_id: string;
  attempt: number;
  claim_id: string;
  /** a JSON number in the document (the claim's fencingToken is the exact string) */
  fencing_token: number;
  lease_expires_at: string;
  /** the effective scopes: the grant's capabilities within the workload's capability_snapshot */
  capabilities: string[];
  connection_scopes: string[];
  /** the worker's secretReferences (none unless it names some) */
  secret_references: string[];
  [field: string]: Json;
}

/** One claimed workload, as the handler sees it. */
export interface Context {
  readonly workloadId: string;
  readonly claimId: string;
  /** bigint as node-postgres returns it: a string */
  readonly fencingToken: string;
  readonly leaseExpiresAt: Date;
  readonly attempt: number;
  readonly definitionId: string;
  readonly definitionRevision: string;
  readonly input: any;
  readonly checkpointSequence: number;
  /** workload_execution_context's verified document, handed out with the claim (context: true) */
  readonly executionContext: ExecutionContext;
  readonly tenant: string;
  readonly application: string;
  readonly workerId: string;
  readonly resultId: string;
  readonly elapsed: number;
  /** aborted when the handler should stop: cancel requested, claim lost, worker stopped */
  readonly signal: AbortSignal;
  readonly cancelled: boolean;
  readonly lost: boolean;
  readonly resumed: Doc | null;
  throwIfCancelled(): void;
  progress(value: Json): void;
  checkpoint(state: Json): Promise<Doc>;
  resume(): Promise<any | null>;
}

export type Handler = (input: any, ctx: Context) => Json | void | Promise<Json | void>;

export interface Hooks {
  claimed?(job: Context): void;
  succeeded?(job: Context, output: Json): void;
  failed?(job: Context, kind: string, error: string, state: State): void;
  cancelled?(job: Context): void;
  lost?(job: Context, error: FenceError): void;
  error?(error: Error): void;
}

export interface WorkerOptions {
  connection?: string | ClientConfig;
  tenant: string;
  application: string;
  capabilities?: string[];
  concurrency?: number;
  lease?: number;
  batch?: number;
  workerId?: string;
  poll?: number;
  grace?: number;
  hooks?: Hooks;
  expectedSnapshots?: Json;
  secretReferences?: string[];
  poolSize?: number;
  handleSignals?: boolean;
  /** true (the default): each claim hands out its workloads' execution contexts; false: asked for in a second statement */
  context?: boolean;
}

export class Worker {
  constructor(options: WorkerOptions, handler: Handler);
  readonly workerId: string;
  run(): Promise<void>;
  stop(): void;
}
export function runWorker(options: WorkerOptions, handler: Handler): Promise<void>;

export class WorkloadError extends Error {
  static readonly code: string;
  static readonly sqlstate: string;
  readonly code: string;
  readonly sqlstate: string;
  readonly detail?: string;
  constructor(message?: string, detail?: string, options?: { code?: string; sqlstate?: string; cause?: unknown });
}
export class FenceError extends WorkloadError {}
export class InvalidError extends WorkloadError {}
export class UnauthorizedError extends WorkloadError {}
export class NotFoundError extends WorkloadError {}
export class NotReadyError extends WorkloadError {}
export class CapabilityDeniedError extends WorkloadError {}
export class ClaimInvalidError extends FenceError {}
export class StaleFenceError extends FenceError {}
export class LeaseExpiredError extends FenceError {}
export class TransitionDeniedError extends WorkloadError {}
export class SecretRejectedError extends WorkloadError {}
export class ResultDuplicateError extends WorkloadError {}
export class IdempotencyConflictError extends WorkloadError {}
export class CheckpointTamperedError extends WorkloadError {}
export class SnapshotMismatchError extends WorkloadError {}
export class CompensationUnauthorizedError extends WorkloadError {}
export class RawWriteDeniedError extends WorkloadError {}
export class AuthorizationDeniedError extends WorkloadError {}
export class QuotaExceededError extends WorkloadError {}
export const ERRORS: { readonly [code: string]: typeof WorkloadError };
export function fromCode(code: string, message?: string, detail?: string): WorkloadError;
export function fromPg(error: unknown): unknown;

export class PermanentError extends Error {
  readonly kind: string;
  constructor(message?: string, kind?: string);
}
export class RetryableError extends Error {
  readonly kind: string;
  constructor(message?: string, kind?: string);
}
export class Cancelled extends Error {
  constructor(message?: string);
}
