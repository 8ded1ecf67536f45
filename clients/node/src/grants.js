// Grants for the common cases, and the create spec around them.  A grant is
// the body workload_sign_grant signs (docs/grants.md explains each field);
// grant() fills every field from a few arguments; signing is the server's
// (an admin's call): Client.signGrant.
import { randomUUID } from 'node:crypto';

const KINDS = ['agent', 'human', 'service', 'workload'];

/** {kind, id} from "service:billing" or an object with those keys. */
export function principal(value) {
  if (value && typeof value === 'object') return { kind: String(value.kind), id: String(value.id) };
  const s = String(value);
  const i = s.indexOf(':');
  const kind = s.slice(0, i);
  const id = s.slice(i + 1);
  if (i < 0 || !KINDS.includes(kind) || !id) {
    throw new TypeError(`a principal is 'kind:id' with kind one of ${KINDS.join(', ')}: ${s}`);
  }
  return { kind, id };
}

const rfc3339 = (ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/**
 * A grant body ready for workload_sign_grant.  subject is who will create
 * work under it (each workload's requested_by); capabilities what that work
 * may require ("*": anything); valid from now (or notBefore) for ttlSeconds;
 * databaseRole binds it to the role that may present it.
 */
export function grant({
  tenant, application, subject, capabilities = ['*'], ttlSeconds = 86400,
  databaseRole, issuer = 'service:workload-admin', id, resources = [], parentGrant = null,
  revision = 1, notBefore, subjectAttributes = {},
}) {
  const start = notBefore ? notBefore.getTime() : Date.now();
  const attrs = { ...subjectAttributes };
  if (databaseRole !== undefined) attrs.database_role = databaseRole;
  return {
    contract_version: 1,
    id: id ?? `grant-${tenant}-${application}-${randomUUID().slice(0, 12)}`,
    issuer: principal(issuer),
    subject: principal(subject),
    tenant_id: tenant,
    application_id: application,
    capabilities: [...capabilities],
    resources: [...resources],
    constraints: { subject_attributes: attrs },
    issued_at: rfc3339(start),
    expires_at: rfc3339(start + ttlSeconds * 1000),
    parent_grant: parentGrant,
    revision,
    status: 'active',
  };
}

/**
 * A create spec.  grant is the signed grant ({grant, key_id, signature});
 * requestedBy defaults to its subject; capabilities is the spec's
 * capability_snapshot; fields adds any other spec field as the SQL API
 * names it (priority, retry_policy, timeouts, dependencies, not_before, ...).
 */
export function spec({
  tenant, application, definitionId, input, key, grant: signed, requestedBy,
  environment = 'default', definitionRevision = '1', trigger = 'api', capabilities = [],
  fields = {},
}) {
  if (!signed) throw new TypeError('a spec needs a signed grant');
  if (key === undefined) throw new TypeError('a spec needs key (the idempotency key)');
  return {
    tenant_id: tenant,
    application_id: application,
    environment,
    definition_id: definitionId,
    definition_revision: definitionRevision,
    trigger,
    input,
    requested_by: principal(requestedBy ?? signed.grant.subject),
    authorization_snapshot: signed,
    capability_snapshot: [...capabilities],
    idempotency_key: key,
    ...fields,
  };
}
