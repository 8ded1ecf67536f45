\echo Use "ALTER EXTENSION workload UPDATE TO '1.4'" to load this file. \quit

-- workload 1.3 -> 1.4: nobody stalls the shared machinery (SPEC section 5.1).
-- The tick, the background workers and every shared name belong to all
-- tenants: no tenant, and no role outside workload_admin, can stop, stall or
-- starve them.  Claims held through the update keep their fences and leases.

-- Schedule time zones are IANA names only, stored as pg_timezone_names
-- spells them: a POSIX zone specification ("BBB0:01") made the tick cache one
-- zone per spelling for its life.  A schedule whose zone is no IANA name is
-- paused, with the reason in last_error, until it is replaced with one.
UPDATE workload.schedules s SET timezone = z.name
FROM pg_catalog.pg_timezone_names z
WHERE pg_catalog.upper(z.name) OPERATOR(pg_catalog.=) pg_catalog.upper(s.timezone)
  AND z.name OPERATOR(pg_catalog.<>) s.timezone;
UPDATE workload.schedules s SET paused = true, next_run_at = NULL,
    last_error = pg_catalog.jsonb_build_object('code', 'WORKLOAD_INVALID', 'sqlstate', 'WL001',
        'message', 'time zone "' OPERATOR(pg_catalog.||) s.timezone OPERATOR(pg_catalog.||)
            '" is not an IANA time zone name; the schedule was paused by the update to 1.4',
        'at', pg_catalog.statement_timestamp())
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names z
                  WHERE z.name OPERATOR(pg_catalog.=) s.timezone);

-- Citus moves a shard group online (citus_move_shard_placement, the
-- rebalancer) by logical replication, which needs every table of the group
-- to say how a deleted or updated row is identified: event_rows has no key
-- (workload.event_rows's index, below in 1.3, says why), so its whole row
-- does.  Only a server with wal_level = logical writes anything more for it
-- (the old row of a delete: retention's).
ALTER TABLE workload.event_rows REPLICA IDENTITY FULL;

-- Memberships name roles by identity (SPEC section 5.1): the role's OID,
-- recorded when the membership is added, never a name that is parsed or
-- case-folded (a membership added for "Alice" let the role alice act).  A
-- row whose role does not exist under its exact name counts for nobody and
-- is removed.  workload.member_role is what the statements compare: the OID,
-- or on Citus, where each node gives a role its own OID, the exact name.
ALTER TABLE workload.tenant_members ADD COLUMN role_oid oid;
UPDATE workload.tenant_members m SET role_oid = r.oid
FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) m.role;
DELETE FROM workload.tenant_members WHERE role_oid IS NULL;
ALTER TABLE workload.tenant_members ALTER COLUMN role_oid SET NOT NULL;
ALTER TABLE workload.tenant_members DROP CONSTRAINT tenant_members_pkey;
ALTER TABLE workload.tenant_members ADD CONSTRAINT tenant_members_pkey
    PRIMARY KEY (role_oid, tenant_id, application_id);
CREATE FUNCTION workload.member_role(role_oid oid, role name)
    RETURNS oid LANGUAGE C STABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'workload_member_role';
COMMENT ON FUNCTION workload.member_role(oid, name) IS 'the role a membership names, by identity (its OID; on Citus its exact name)';
REVOKE ALL ON FUNCTION workload.member_role(oid, name) FROM PUBLIC;
-- A role's OID is its identity within one cluster; roles move between
-- clusters by name (pg_dumpall --roles-only).  So a membership row written
-- other than by the API (a restore's COPY, the one such write the raw-write
-- guard lets in) takes the OID of the role named exactly so in this
-- cluster, and one whose role is not here is left out, with a warning:
-- never the OID another cluster gave it, which may be another role's here.
-- (The API writes the OID of the role it resolved by the same exact name.
-- On Citus, where memberships name roles by their exact name and each node
-- keeps the same row, the row is written as it comes.)
CREATE FUNCTION workload.tenant_members_role_oid() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        RETURN NEW;
    END IF;
    NEW.role_oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) NEW.role);
    IF NEW.role_oid IS NULL THEN
        RAISE WARNING 'workload: the membership of role "%" in tenant "%", application "%" is left out: no role has that name here',
            NEW.role, NEW.tenant_id, NEW.application_id
            USING HINT = 'Create the roles first (pg_dumpall --roles-only), then restore.';
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION workload.tenant_members_role_oid() FROM PUBLIC;
CREATE TRIGGER tenant_members_role_oid_trg BEFORE INSERT ON workload.tenant_members
    FOR EACH ROW EXECUTE FUNCTION workload.tenant_members_role_oid();
ALTER TABLE workload.tenant_members ENABLE ALWAYS TRIGGER tenant_members_role_oid_trg;

-- A tenant's and application's own channel secret, made when a member is
-- removed from it (workload_remove_tenant_member): NOTIFY channels are named
-- under it from then on (SPEC section 4, with the same formula), so a removed
-- role that still LISTENs on the old name hears nothing more.  Key material:
-- readable by no role but the extension's owner, as channel_secret.
CREATE TABLE workload.channel_secrets (
    tenant_id            text NOT NULL,
    application_id       text NOT NULL,
    secret               bytea NOT NULL CHECK (pg_catalog.length(secret) OPERATOR(pg_catalog.=) 32),
    rotated_at           timestamptz NOT NULL,
    CONSTRAINT channel_secrets_pkey PRIMARY KEY (tenant_id, application_id)
);
ALTER TABLE workload.channel_secrets ENABLE ROW LEVEL SECURITY;

-- The tick's phases (SPEC section 5.1): the background worker runs each in a
-- transaction of its own, leases first, so that every tenant's lease
-- recoveries and timeouts are committed before anything slower runs;
-- workload_tick() runs them all in the caller's transaction.
CREATE FUNCTION workload.tick_phase(phase text) RETURNS jsonb
    LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_tick_phase';
COMMENT ON FUNCTION workload.tick_phase(text) IS 'one phase of workload_tick (leases, cascades, schedules, sweeps), for the background worker';
REVOKE ALL ON FUNCTION workload.tick_phase(text) FROM PUBLIC;

-- What a maintenance pass left of a cascade for the next (a pass has a budget
-- of steps and waits for no row another session holds): the dependents of
-- workload_id, which reached final_state, after after_id (a frame,
-- dependent_id ''), or the one dependent dependent_id whose row was held.
CREATE TABLE workload.cascades (
    tenant_id            text NOT NULL,
    workload_id          text NOT NULL,
    final_state          @extschema@.workload_state NOT NULL,
    after_id             text,
    dependent_id         text NOT NULL,
    queued_at            timestamptz NOT NULL,
    CONSTRAINT cascades_pkey PRIMARY KEY (tenant_id, workload_id, dependent_id)
);

-- A claim never hands out a workload whose authority has lapsed (SPEC
-- section 5.1): each workload row keeps when its authority lapses, the
-- sooner of its run authority's and its authorization snapshot's
-- expires_at; a claim that takes one past it dead-letters it instead, with
-- cause authorization_expired.  Filled in here for the workloads not final.
ALTER TABLE workload.workload_rows ADD COLUMN authority_expires_at timestamptz;
UPDATE workload.workload_rows w
SET authority_expires_at = LEAST(
        (a.run_authority OPERATOR(pg_catalog.->) 'grant' OPERATOR(pg_catalog.->>) 'expires_at')::timestamptz,
        (a.authorization_snapshot OPERATOR(pg_catalog.->) 'grant' OPERATOR(pg_catalog.->>) 'expires_at')::timestamptz)
FROM workload.spec_authority a
WHERE a.tenant_id OPERATOR(pg_catalog.=) w.tenant_id AND a.workload_seq OPERATOR(pg_catalog.=) w.seq
  AND NOT EXISTS (SELECT 1 FROM workload.runs r
                  WHERE r.tenant_id OPERATOR(pg_catalog.=) w.tenant_id AND r.seq OPERATOR(pg_catalog.=) w.seq
                    AND r.state OPERATOR(pg_catalog.=) ANY (ARRAY['SUCCEEDED', 'CANCELLED']::@extschema@.workload_state[]))
  AND w.state OPERATOR(pg_catalog.<>) ALL (ARRAY['SUCCEEDED', 'CANCELLED']::@extschema@.workload_state[]);
-- workload.workloads shows every column of workload.workload_rows
CREATE OR REPLACE VIEW workload.workloads WITH (security_invoker = true) AS
SELECT w.tenant_id,
       w.workload_id,
       w.seq,
       w.application_id,
       w.priority,
       w.created_at,
       w.capability_snapshot,
       w.has_dependencies,
       w.has_criteria,
       w.queue_ms,
       w.claim_ms,
       w.execution_ms,
       w.heartbeat_ms,
       w.overall_ms,
       CASE WHEN r.seq IS NULL THEN w.next_attempt_at ELSE r.next_attempt_at END AS next_attempt_at,
       CASE WHEN r.seq IS NULL THEN w.unheld_deadline_at ELSE r.unheld_deadline_at END AS unheld_deadline_at,
       CASE WHEN r.seq IS NULL THEN w.retry_count ELSE r.retry_count END AS retry_count,
       CASE WHEN r.seq IS NULL THEN w.wait_count ELSE r.wait_count END AS wait_count,
       CASE WHEN r.seq IS NULL THEN w.checkpoint_sequence ELSE r.checkpoint_sequence END AS checkpoint_sequence,
       CASE WHEN r.seq IS NULL THEN w.last_failure ELSE r.last_failure END AS last_failure,
       CASE WHEN r.seq IS NULL THEN w.attempt_count ELSE r.attempt_count END AS attempt_count,
       CASE WHEN r.seq IS NULL THEN w.fencing_token ELSE r.fencing_token END AS fencing_token,
       CASE WHEN r.seq IS NULL THEN w.claimed_at ELSE r.claimed_at END AS claimed_at,
       CASE WHEN r.seq IS NULL THEN w.claim_id ELSE r.claim_id END AS claim_id,
       CASE WHEN r.seq IS NULL THEN w.worker_id ELSE r.worker_id END AS worker_id,
       CASE WHEN r.seq IS NULL THEN w.claimed_by ELSE r.claimed_by END AS claimed_by,
       CASE WHEN r.seq IS NULL THEN w.result_id ELSE r.result_id END AS result_id,
       CASE WHEN r.seq IS NULL THEN w.state ELSE r.state END AS state,
       CASE WHEN r.seq IS NULL THEN w.state_entered_at ELSE r.state_entered_at END AS state_entered_at,
       CASE WHEN r.seq IS NULL THEN w.updated_at ELSE r.updated_at END AS updated_at,
       CASE WHEN r.seq IS NULL THEN w.started_at ELSE r.started_at END AS started_at,
       CASE WHEN r.seq IS NULL THEN w.deadline_at ELSE r.deadline_at END AS deadline_at,
       CASE WHEN r.seq IS NULL THEN w.lease_expires_at ELSE r.lease_expires_at END AS lease_expires_at,
       CASE WHEN r.seq IS NULL THEN w.last_heartbeat_at ELSE r.last_heartbeat_at END AS last_heartbeat_at,
       CASE WHEN r.seq IS NULL THEN w.progress ELSE r.progress END AS progress,
       w.authority_expires_at
FROM workload.workload_rows w
LEFT JOIN workload.runs r ON r.seq OPERATOR(pg_catalog.=) w.seq AND r.tenant_id OPERATOR(pg_catalog.=) w.tenant_id;

-- The states of the events a run row carries are written as a cast from
-- text, which the planner does not fold (enum input is STABLE): a condition
-- on from_state or to_state then filters each part instead of removing the
-- parts it contradicts.  On Citus a query whose every table names one tenant
-- goes whole to that tenant's node only if no part was removed so (a removed
-- part counts as one that reads every shard): "the events of this tenant's
-- workloads that were cancelled", as a join or a correlated subquery, was
-- refused as a join across nodes.
CREATE OR REPLACE VIEW workload.carried_events WITH (security_invoker = true) AS
SELECT u.tenant_id, u.workload_seq, u.sequence, u.from_state, u.to_state, u.fencing_token,
       u.attempt, u.actor, u.at, u.db_role, u.evidence
FROM (SELECT r.tenant_id, r.seq AS workload_seq, r.claimed_seq AS sequence,
           'READY'::text::@extschema@.workload_state AS from_state,
           'CLAIMED'::text::@extschema@.workload_state AS to_state, r.fencing_token,
           r.attempt_count AS attempt, r.event_worker AS actor, r.claimed_at AS at,
           r.event_role AS db_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker) AS evidence
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.started_seq, 'CLAIMED'::text::@extschema@.workload_state,
           'RUNNING'::text::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.started_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.finished_seq, 'RUNNING'::text::@extschema@.workload_state,
           'SUCCEEDED'::text::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.finished_at, r.event_role, pg_catalog.jsonb_build_object('result_id', r.result_id)
      FROM workload.runs r) u
WHERE u.sequence IS NOT NULL;
CREATE OR REPLACE VIEW workload.events WITH (security_invoker = true) AS
SELECT u.tenant_id, u.workload_seq, u.sequence, u.from_state, u.to_state, u.fencing_token,
       u.attempt, u.actor, u.at, u.db_role, u.evidence
FROM (SELECT e.tenant_id, e.workload_seq, e.sequence, e.from_state, e.to_state, e.fencing_token,
           e.attempt, e.actor, e.at, e.db_role, e.evidence
      FROM workload.event_rows e
      UNION ALL
      SELECT r.tenant_id, r.seq, r.claimed_seq, 'READY'::text::@extschema@.workload_state,
           'CLAIMED'::text::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.claimed_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.started_seq, 'CLAIMED'::text::@extschema@.workload_state,
           'RUNNING'::text::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.started_at, r.event_role, pg_catalog.jsonb_build_object('worker_id', r.event_worker)
      FROM workload.runs r
      UNION ALL
      SELECT r.tenant_id, r.seq, r.finished_seq, 'RUNNING'::text::@extschema@.workload_state,
           'SUCCEEDED'::text::@extschema@.workload_state, r.fencing_token, r.attempt_count, r.event_worker,
           r.finished_at, r.event_role, pg_catalog.jsonb_build_object('result_id', r.result_id)
      FROM workload.runs r) u
WHERE u.sequence IS NOT NULL;

-- workload_claim(..., context): with context, each claimed row also carries
-- its verified execution context (what workload_execution_context answers,
-- with no secret references), so a worker needs no second round trip; a
-- workload whose authority no longer holds is dead-lettered, not handed out
-- (SPEC section 5.1).  The function gains an argument and a column, so it
-- and its routed form are made again; calls that name no context are
-- answered as before, with execution_context NULL.
DROP FUNCTION workload.route_workload_claim(text, text, text[], text, text, interval, integer, boolean, jsonb);
DROP FUNCTION @extschema@.workload_claim(text, text[], text, text, interval, integer, boolean);
CREATE FUNCTION @extschema@.workload_claim(worker_id text, capabilities text[],
        tenant_id text, application_id text, lease interval DEFAULT '30 seconds',
        max_items integer DEFAULT 1, start boolean DEFAULT false, context boolean DEFAULT false)
    RETURNS TABLE(workload_id text, claim_id text, fencing_token bigint,
                  lease_expires_at timestamptz, attempt integer, definition_id text,
                  definition_revision text, input jsonb, checkpoint_sequence integer,
                  execution_context jsonb)
    LANGUAGE C VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_claim';
COMMENT ON FUNCTION @extschema@.workload_claim(text, text[], text, text, interval, integer, boolean, boolean) IS 'claim up to max_items due READY workloads (FOR UPDATE SKIP LOCKED); with context, each with its verified execution context';
REVOKE ALL ON FUNCTION @extschema@.workload_claim(text, text[], text, text, interval, integer, boolean, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.workload_claim(text, text[], text, text, interval, integer, boolean, boolean) TO workload_worker;
CREATE FUNCTION workload.route_workload_claim(tenant text, text, text[], text, text, interval,
        integer, boolean, boolean, context jsonb)
    RETURNS TABLE(workload_id text, claim_id text, fencing_token bigint,
                  lease_expires_at timestamptz, attempt integer, definition_id text,
                  definition_revision text, input jsonb, checkpoint_sequence integer,
                  execution_context jsonb)
    LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp SET jit = off
    AS 'MODULE_PATHNAME', 'workload_routed';
REVOKE ALL ON FUNCTION workload.route_workload_claim(text, text, text[], text, text, interval,
    integer, boolean, boolean, jsonb) FROM PUBLIC;

-- A schedule's grant over time (SPEC section 5.1): its expiry is kept beside
-- the template, workload_schedules marks it grant_expiring within
-- workload.schedule_grant_warning of it, and the tick records one
-- 'schedule.grant_expiring' event a grant (grant_warned_at);
-- workload_schedule_set_grant replaces the grant and touches nothing else.
ALTER TABLE workload.schedules ADD COLUMN grant_expires_at timestamptz,
    ADD COLUMN grant_warned_at timestamptz;
UPDATE workload.schedules s
SET grant_expires_at = (s.template OPERATOR(pg_catalog.#>>)
        '{authorization_snapshot,grant,expires_at}')::pg_catalog.timestamptz
WHERE (s.template OPERATOR(pg_catalog.#>>) '{authorization_snapshot,grant,expires_at}') IS NOT NULL;
CREATE INDEX schedules_grant_idx ON workload.schedules (grant_expires_at)
    WHERE grant_warned_at IS NULL;
CREATE FUNCTION @extschema@.workload_schedule_set_grant(tenant_id text, application_id text,
        schedule_id text, authorization_snapshot jsonb)
    RETURNS jsonb LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'workload_schedule_set_grant';
COMMENT ON FUNCTION @extschema@.workload_schedule_set_grant(text, text, text, jsonb) IS 'replace a schedule''s grant; its slots, pause and history stay as they are';
REVOKE ALL ON FUNCTION @extschema@.workload_schedule_set_grant(text, text, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.workload_schedule_set_grant(text, text, text, jsonb) TO workload_client;

-- On Citus, the tables this version adds are distributed as the others:
-- channel_secrets a reference table, cascades by tenant beside
-- workload_rows.  A cluster distributed before the update distributes them
-- when workload_citus_distribute() is called again (it leaves what is
-- distributed as it is).
CREATE OR REPLACE FUNCTION workload.citus_distribute_tables() RETURNS jsonb
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ref text[] := ARRAY['signing_keys', 'channel_secret', 'channel_secrets', 'revoked_grants',
        'tenant_members', 'grant_lineage'];
    -- workload_rows first: every other table is co-located with it
    dist text[] := ARRAY['workload_rows', 'runs', 'queue', 'specs', 'spec_authority', 'event_rows', 'attempts',
        'checkpoints', 'dependencies', 'waits', 'compensations', 'cascades'];
    t text;
    made_ref text[] := '{}';
    made_dist text[] := '{}';
    made_fn text[] := '{}';
    f regprocedure;
    local_group integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: Citus is not installed in this database'
            USING ERRCODE = 'WL001',
                  HINT = 'CREATE EXTENSION citus, on the coordinator and on every worker, before distributing.';
    END IF;
    EXECUTE 'SELECT groupid FROM pg_dist_local_group' INTO local_group;
    IF local_group IS DISTINCT FROM 0 THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: this node is not the Citus coordinator'
            USING ERRCODE = 'WL001',
                  HINT = 'Call workload_citus_distribute() on the coordinator.';
    END IF;
    -- our guard triggers go to the shards (refuse_raw_write admits Citus's own writes)
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    PERFORM set_config('citus.log_remote_commands', 'off', true);
    FOREACH t IN ARRAY ref LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition
                       WHERE logicalrelid = ('workload.' || t)::regclass) THEN
            PERFORM create_reference_table(('workload.' || t)::regclass);
            made_ref := made_ref || t;
        END IF;
    END LOOP;
    -- Nothing is carried on Citus (the direct paths do not carry there): the
    -- events run rows carry become event rows before the tables are
    -- distributed, so that a claim there never overwrites what they read.
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'workload.runs'::regclass) THEN
        INSERT INTO workload.event_rows SELECT * FROM workload.carried_events;
        UPDATE workload.runs SET started_seq = NULL, claimed_seq = NULL, event_worker = NULL,
            event_role = NULL, finished_seq = NULL, finished_at = NULL
        WHERE claimed_seq IS NOT NULL OR started_seq IS NOT NULL OR finished_seq IS NOT NULL;
    END IF;
    FOREACH t IN ARRAY dist LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_partition
                       WHERE logicalrelid = ('workload.' || t)::regclass) THEN
            IF t = 'workload_rows' THEN
                PERFORM create_distributed_table('workload.workload_rows'::regclass, 'tenant_id');
            ELSE
                PERFORM create_distributed_table(('workload.' || t)::regclass, 'tenant_id',
                    colocate_with => 'workload.workload_rows');
            END IF;
            made_dist := made_dist || t;
        END IF;
    END LOOP;
    -- each node's sequences in its own range (nodes added later: call again)
    PERFORM 1 FROM run_command_on_all_nodes('SELECT workload.citus_sequence_range()') x
        WHERE NOT x.success;
    IF FOUND THEN
        RAISE EXCEPTION 'WORKLOAD_INVALID: a node of the cluster could not set its sequence range'
            USING ERRCODE = 'WL001', HINT = 'Every node must be up to distribute; call again.';
    END IF;
    -- the routed calls, delegated by their tenant to the node that holds it
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'workload'::regnamespace AND p.proname LIKE 'route\_%'
             ORDER BY p.proname LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass
                       AND o.objid = f::oid AND o.distribution_argument_index IS NOT NULL) THEN
            PERFORM create_distributed_function(f, '$1', colocate_with => 'workload.workload_rows',
                force_delegation => true);
            made_fn := made_fn || f::text;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('reference_tables', to_jsonb(ref), 'distributed_tables', to_jsonb(dist),
        'made_reference', to_jsonb(made_ref), 'made_distributed', to_jsonb(made_dist),
        'made_routed', to_jsonb(made_fn));
END
$$;

-- ============================================================================
-- The tables this version adds are guarded, hidden and dumped as the others:
-- written by the API alone (the raw-write triggers, ENABLE ALWAYS), no
-- privilege for PUBLIC, and registered for pg_dump.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['channel_secrets', 'cascades'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_write_trg', t);
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER %I BEFORE TRUNCATE ON workload.%I '
            'FOR EACH STATEMENT EXECUTE FUNCTION workload.refuse_raw_write()',
            t OPERATOR(pg_catalog.||) '_raw_truncate_trg', t);
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_write_trg');
        EXECUTE pg_catalog.format('ALTER TABLE workload.%I ENABLE ALWAYS TRIGGER %I',
            t, t OPERATOR(pg_catalog.||) '_raw_truncate_trg');
        EXECUTE pg_catalog.format('REVOKE ALL ON workload.%I FROM PUBLIC', t);
        PERFORM pg_catalog.pg_extension_config_dump(('workload.' OPERATOR(pg_catalog.||) t)::pg_catalog.regclass, '');
    END LOOP;
END
$$;
-- the operator may read what maintenance left for its next passes (not the key material)
GRANT SELECT ON workload.cascades TO workload_admin;
