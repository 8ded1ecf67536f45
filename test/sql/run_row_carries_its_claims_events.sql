-- A claim, a start and a completion (RUNNING -> SUCCEEDED) write their events on the workload's run row (claimed_seq, started_seq, finished_seq and finished_at, event_worker, event_role), not as three more event rows; workload.events (SPEC section 6) shows them among the event rows, each with its own sequence drawn at the transition, with the columns an event row would have had, and every reader agrees. A writer that changes what they read (a failure, the next claim, a cancel) first appends them as event rows with the same sequences, so a history read before is the start of the history read after. Where they cannot be carried (a row trigger on workload.event_rows, a start by a role that did not claim), they are event rows as before. Retention finds a workload whose run row carries its completion and purges it with everything it carried.
\set SHOW_CONTEXT never
\set ECHO none
\i test/include/helpers.sql
-- what this shows is how the direct paths store rows: not there to see when
-- every call runs through its statements
SELECT COALESCE(current_setting('workload.statement_path', true), 'off') AS statement_path \gset
\if :statement_path
\echo 'skipped: the direct paths do not run (workload.statement_path is on)'
\quit
\endif
\set ECHO all
SET workload.clock_override = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.hist(id text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_agg(jsonb_build_object('sequence', h.sequence, 'to', h.to_state, 'from', h.from_state,
                                        'actor', h.actor, 'at', h.at, 'evidence', h.evidence)
                     ORDER BY h.sequence)
    FROM workload_history(id) h $$;
-- where each event of a workload is kept: R an event row, C carried by the run row
CREATE FUNCTION pg_temp.kept(id text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(e.to_state || ':' || CASE WHEN r.sequence IS NULL THEN 'C' ELSE 'R' END, ' '
                      ORDER BY e.sequence)
    FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
    LEFT JOIN workload.event_rows r ON r.tenant_id = e.tenant_id AND r.workload_seq = e.workload_seq
        AND r.sequence = e.sequence
    WHERE w.workload_id = id $$;

-- the document's events, workload_history and workload.event_log: the same sequences and evidence
CREATE FUNCTION pg_temp.readers_agree(id text) RETURNS boolean LANGUAGE sql AS $$
    SELECT (SELECT jsonb_agg(x -> 'sequence') FROM jsonb_array_elements(workload_get(id) -> 'events') x)
         = (SELECT jsonb_agg(h.sequence ORDER BY h.sequence) FROM workload_history(id) h)
       AND (SELECT jsonb_agg(h.evidence ORDER BY h.sequence) FROM workload_history(id) h)
         = (SELECT jsonb_agg(l.evidence ORDER BY l.sequence) FROM workload.event_log l WHERE l.workload_id = id) $$;

-- claim, start, complete: the claim's and the start's events ride on the run row
SELECT t.create('a') AS a \gset
SELECT claim_id, fencing_token FROM workload_claim('w1', '{}', 'acme', 'billing') \gset
SELECT pg_temp.kept(:'a') AS after_claim;
SELECT workload_start(:'a', :'claim_id', 'w1', :fencing_token) IS NOT NULL AS started;
SELECT pg_temp.kept(:'a') AS after_start;
-- as an event row would show them: the worker, the role, the token and attempt, the times
SELECT e.from_state, e.to_state, e.actor, e.db_role = current_user::text AS by_this_role,
       e.fencing_token, e.attempt, e.evidence, e.at
FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id = :'a' AND e.to_state IN ('CLAIMED', 'RUNNING') ORDER BY e.sequence;
-- every reader agrees, and the sequences rise
SELECT pg_temp.readers_agree(:'a') AS every_reader_agrees;
SELECT pg_temp.hist(:'a') AS before_fail \gset

-- a failure (retried) appends them as event rows, with the same sequences
SELECT workload_fail(:'a', :'claim_id', 'w1', :fencing_token, 'transient_connection', 'reset by peer') AS failed_to;
SELECT pg_temp.kept(:'a') AS after_fail;
SELECT (SELECT jsonb_agg(x ORDER BY n) FROM jsonb_array_elements(pg_temp.hist(:'a')) WITH ORDINALITY x(x, n)
        WHERE n <= jsonb_array_length(:'before_fail'::jsonb)) = :'before_fail'::jsonb AS history_kept;
SELECT count(*) AS carried_left FROM workload.carried_events c
JOIN workload.workloads w ON w.tenant_id = c.tenant_id AND w.seq = c.workload_seq WHERE w.workload_id = :'a';

-- the next claim carries its own events; the first claim's stay as rows, with their token
SET workload.clock_override = '2026-01-01 00:10:00+00';
SELECT claim_id AS claim2, fencing_token AS token2 FROM workload_claim('w2', '{}', 'acme', 'billing', start => true) \gset
SELECT pg_temp.kept(:'a') AS after_second_claim;
SELECT e.to_state, e.actor, e.fencing_token, e.attempt
FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id = :'a' AND e.to_state IN ('CLAIMED', 'RUNNING') ORDER BY e.sequence;
SELECT pg_temp.hist(:'a') AS before_complete \gset
SELECT workload_complete(:'a', :'claim2', 'w2', :token2, 'r-a', '{}') IS NOT NULL AS completed;
-- a final workload keeps them on its run row; the history only grew
SELECT pg_temp.kept(:'a') AS after_complete;
SELECT (SELECT jsonb_agg(x ORDER BY n) FROM jsonb_array_elements(pg_temp.hist(:'a')) WITH ORDINALITY x(x, n)
        WHERE n <= jsonb_array_length(:'before_complete'::jsonb)) = :'before_complete'::jsonb AS history_kept;
-- the completion as an event row would show it: the worker, the role, token, attempt, result id, time
SELECT e.from_state, e.to_state, e.actor, e.db_role = current_user::text AS by_this_role,
       e.fencing_token, e.attempt, e.evidence, e.at
FROM workload.events e JOIN workload.workloads w ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id = :'a' AND e.to_state = 'SUCCEEDED';
SELECT pg_temp.readers_agree(:'a') AS every_reader_agrees;
-- the same completion again returns the stored result and writes nothing
SELECT pg_temp.hist(:'a') AS after_complete_hist \gset
SELECT workload_complete(:'a', :'claim2', 'w2', :token2, 'r-a', '{}') ->> 'result_id' AS retried;
SELECT pg_temp.hist(:'a') = :'after_complete_hist'::jsonb AS history_unchanged;

-- a batch claimed with start: each workload's claim and start, in order, none shared
SELECT t.create('b' || g) IS NOT NULL AS created FROM generate_series(1, 3) g;
CREATE TEMP TABLE c AS SELECT * FROM workload_claim('w3', '{}', 'acme', 'billing', max_items => 3, start => true);
SELECT count(*) AS claimed, count(*) FILTER (WHERE pg_temp.kept(workload_id) LIKE '%CLAIMED:C RUNNING:C') AS carried
FROM c;
-- a cancel appends them too
SELECT workload_cancel((SELECT min(workload_id) FROM c), 'no longer needed') AS cancelled;
SELECT pg_temp.kept((SELECT min(workload_id) FROM c)) AS after_cancel;
-- a batch's completions carry theirs too
SELECT string_agg(DISTINCT outcome, ',') AS outcomes, count(*) AS items
FROM workload_complete_many('w3', (SELECT jsonb_agg(jsonb_build_object('workload_id', workload_id,
    'claim_id', claim_id, 'fencing_token', fencing_token, 'result_id', 'r-' || workload_id, 'output', '{}'))
    FROM c WHERE workload_id > (SELECT min(workload_id) FROM c)));
SELECT pg_temp.kept(workload_id) AS after_complete_many FROM c
WHERE workload_id > (SELECT min(workload_id) FROM c) ORDER BY workload_id;

-- a start by a role other than the one that claimed is an event row with its own role
SET client_min_messages = warning;
DROP ROLE IF EXISTS rc_worker;
RESET client_min_messages;
CREATE ROLE rc_worker;
GRANT workload_worker TO rc_worker;
SELECT workload_add_tenant_member('rc_worker', 'acme', 'billing') IS NOT NULL AS member;
SELECT t.create('d') AS d \gset
SET ROLE rc_worker;
SELECT claim_id AS claim_d, fencing_token AS token_d FROM workload_claim('w4', '{}', 'acme', 'billing') \gset
RESET ROLE;
SELECT workload_start(:'d', :'claim_d', 'w4', :token_d) IS NOT NULL AS started_by_superuser;
SELECT e.to_state, e.db_role FROM workload.events e JOIN workload.workloads w
    ON w.tenant_id = e.tenant_id AND w.seq = e.workload_seq
WHERE w.workload_id = :'d' AND e.to_state IN ('CLAIMED', 'RUNNING') ORDER BY e.sequence;
SELECT pg_temp.kept(:'d') AS kept_d;

-- nothing is carried while a row trigger on workload.event_rows waits for each event
SET workload.clock_override = '2026-01-01 00:20:00+00';
CREATE FUNCTION pg_temp.seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'event row: %', NEW.to_state;
    RETURN NEW;
END $$;
CREATE TRIGGER seen AFTER INSERT ON workload.event_rows FOR EACH ROW EXECUTE FUNCTION pg_temp.seen();
SELECT t.create('e') AS e \gset
SELECT claim_id AS claim_e, fencing_token AS token_e FROM workload_claim('w5', '{}', 'acme', 'billing') \gset
SELECT workload_start(:'e', :'claim_e', 'w5', :token_e) IS NOT NULL AS started;
SELECT workload_complete(:'e', :'claim_e', 'w5', :token_e, 'r-e', '{}') IS NOT NULL AS completed;
DROP TRIGGER seen ON workload.event_rows;
SELECT pg_temp.kept(:'e') AS kept_e;
-- a completion kept as an event row and one carried read alike (but for their values)
SELECT (SELECT jsonb_agg(jsonb_build_object('from', h.from_state, 'actor', h.actor,
            'evidence_keys', (SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys(h.evidence) k)))
        FROM workload_history(:'e') h WHERE h.to_state = 'SUCCEEDED')
     = (SELECT jsonb_agg(jsonb_build_object('from', h.from_state, 'actor', 'w5',
            'evidence_keys', (SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys(h.evidence) k)))
        FROM workload_history(:'a') h WHERE h.to_state = 'SUCCEEDED') AS alike;

-- one sequence, never shared, across rows and run rows
SELECT count(*) = count(DISTINCT sequence) AS sequences_unique, count(*) > 0 AS some FROM workload.events;

-- a join with the view reaches the run rows by their key, never by reading every run
-- row: each part is a member of one append (a part with its own WHERE, or nested
-- views, was a subquery a join could not reach into)
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FILTER (WHERE p LIKE '%Seq Scan%') AS seq_scans,
       count(*) FILTER (WHERE p LIKE '%Index Scan using runs_pkey on runs%') AS run_row_probes
FROM pg_temp.plan(format('SELECT * FROM workload.event_log WHERE workload_id = %L', :'a')) p;
SELECT count(*) FILTER (WHERE p LIKE '%Seq Scan%') AS seq_scans,
       count(*) FILTER (WHERE p LIKE '%Index Scan using runs_pkey on runs%') AS run_row_probes
FROM pg_temp.plan(format('SELECT e.* FROM workload.workload_rows w JOIN workload.events e
    ON e.tenant_id = w.tenant_id AND e.workload_seq = w.seq WHERE w.workload_id = %L', :'a')) p;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- retention finds the workloads whose run rows carry their completions (through
-- runs_pkey, among the workloads created before the cutoff) as it finds those
-- with a completion's event row, oldest first across both, and purges them with
-- what they carried: a, b2 and b3 completed (carried) at 00:10, e (an event row)
-- at 00:20
SET workload.clock_override = '2026-01-03 00:00:00+00';
SELECT workload_purge('1 day', 3) AS purged_first;
SELECT w.workload_id = :'e' AS is_e, w.state FROM workload.workloads w
WHERE w.workload_id IN (:'a', :'e') OR w.workload_id IN (SELECT workload_id FROM c) ORDER BY 1;
SELECT workload_purge('1 day', 3) AS purged_then;
SELECT w.state FROM workload.workloads w
WHERE w.workload_id IN (:'a', :'e') OR w.workload_id IN (SELECT workload_id FROM c);
-- nothing of theirs is left: no run row, no event (row or carried)
SELECT count(*) AS runs_left FROM workload.runs r
WHERE NOT EXISTS (SELECT 1 FROM workload.workload_rows w WHERE w.tenant_id = r.tenant_id AND w.seq = r.seq);
SELECT count(*) AS events_left FROM workload.events e
WHERE NOT EXISTS (SELECT 1 FROM workload.workload_rows w WHERE w.tenant_id = e.tenant_id AND w.seq = e.workload_seq);
