-- test/reliability/invariants.sql: the store-wide invariants every reliability
-- scenario checks (nothing lost, nothing done twice, nothing illegal).  Prints
-- one "ok - ..." or "not ok - ... (N violations, e.g. ...)" line per
-- invariant, and "# ..." notes.  Runs one tick (workload_recover_expired)
-- first, then reads the whole store in one REPEATABLE READ snapshot, so it may
-- run beside live workers.  Optional psql variables, each a file the test
-- driver wrote outside the database:
--   creates  workload ids whose workload_create a client saw return
--   acks     workload_id, result_id, output_hash, fencing_token (tab-separated)
--            of each workload_complete a worker saw return (committed)
--   claims   workload_id, fencing_token, claim_id of each claim a worker saw
--   hwm      restart time and max(events.sequence) after each restart: every
--            event written later must have a larger sequence
-- (read with server-side COPY: the checker connects as a superuser on the
-- machine that runs the test)
\set ON_ERROR_STOP on
\set QUIET on
\pset tuples_only on
\pset format unaligned
SET client_min_messages = warning;

CREATE TEMP TABLE rl_creates (workload_id text);
CREATE TEMP TABLE rl_acks (workload_id text, result_id text, output_hash text, fencing_token bigint);
CREATE TEMP TABLE rl_claims (workload_id text, fencing_token bigint, claim_id text);
CREATE TEMP TABLE rl_hwm (restart_at timestamptz, hwm bigint);
\if :{?creates}
COPY rl_creates FROM :'creates';
\endif
\if :{?acks}
COPY rl_acks FROM :'acks';
\endif
\if :{?claims}
COPY rl_claims FROM :'claims';
\endif
\if :{?hwm}
COPY rl_hwm FROM :'hwm';
\endif

-- verdict(label, violations): the TAP line for one invariant
CREATE FUNCTION pg_temp.verdict(label text, v text[]) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN coalesce(cardinality(v), 0) = 0 THEN 'ok - ' || label
        ELSE 'not ok - ' || label || ' (' || cardinality(v) || ' violations, e.g. '
             || array_to_string(v[1:3], '; ') || ')' END
$$;

-- the events and attempts with their workload ids, in any version's tables
-- (1.3 keeps them in views; the walk of upgrade_walks_every_path.sh checks
-- every version it passes through)
DO $$
BEGIN
    IF to_regclass('workload.event_log') IS NOT NULL THEN
        CREATE TEMP VIEW rl_event_log AS SELECT * FROM workload.event_log;
        CREATE TEMP VIEW rl_attempt_log AS SELECT * FROM workload.attempt_log;
    ELSE
        CREATE TEMP VIEW rl_event_log AS SELECT * FROM workload.events;
        CREATE TEMP VIEW rl_attempt_log AS SELECT * FROM workload.attempts;
    END IF;
END
$$;

-- the tick: recover every lease that expired before tick_at
SELECT statement_timestamp() AS tick_at \gset
SELECT '# tick recovered ' || count(*) || ' expired lease(s)' FROM workload_recover_expired();

BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;

SELECT '# store: ' || coalesce((SELECT string_agg(state || '=' || n, ' ' ORDER BY state)
        FROM (SELECT state::text, count(*) n FROM workload.workloads GROUP BY 1) s), 'empty')
    || ', ' || (SELECT count(*) FROM rl_event_log) || ' events, '
    || (SELECT count(*) FROM workload.results) || ' results, '
    || (SELECT count(*) FROM rl_attempt_log) || ' attempts';

-- (1.3 on) the queue holds exactly the READY workloads and the leases exactly
-- the claimed ones: a row missing from either is work nobody can claim or a
-- claim nobody recovers
SELECT to_regclass('workload.leases') IS NULL AS no_queue \gset
\if :no_queue
SELECT '# (no queue and lease tables in this version)';
\else
SELECT pg_temp.verdict('the queue holds exactly the READY workloads, the leases exactly the claimed ones', ARRAY(
    SELECT coalesce(w.workload_id, 'queue row ' || q.seq) || ' state ' || coalesce(w.state::text, '?')
    FROM workload.workloads w FULL JOIN workload.queue q ON q.tenant_id = w.tenant_id AND q.seq = w.seq
    WHERE (w.state = 'READY') IS DISTINCT FROM (q.seq IS NOT NULL)
    UNION ALL
    SELECT coalesce(w.workload_id, 'lease row ' || l.seq) || ' claim ' || coalesce(w.claim_id, 'none')
    FROM workload.workloads w FULL JOIN workload.leases l ON l.tenant_id = w.tenant_id AND l.seq = w.seq
    WHERE (w.claim_id IS NOT NULL) IS DISTINCT FROM (l.seq IS NOT NULL)
    LIMIT 100));
\endif

-- (1.3 on) the tick finds a deadline by the deadline index while nobody holds
-- the row, by its lease while a claim is held: a deadline in neither is a
-- timeout that never fires
SELECT NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'workload.workloads'::regclass
    AND attname = 'unheld_deadline_at' AND NOT attisdropped) AS no_unheld \gset
\if :no_unheld
SELECT '# (deadlines are indexed as they are in this version)';
\else
SELECT pg_temp.verdict('a deadline is indexed exactly while nobody holds its row', ARRAY(
    SELECT w.workload_id || ' claim ' || coalesce(w.claim_id, 'none') || ' deadline '
        || coalesce(w.deadline_at::text, 'none') || ' indexed ' || coalesce(w.unheld_deadline_at::text, 'none')
    FROM workload.workloads w
    WHERE w.unheld_deadline_at IS DISTINCT FROM CASE WHEN w.claim_id IS NULL THEN w.deadline_at END
    LIMIT 100));
\endif

-- every workload is a pair of a spec and a state row
SELECT pg_temp.verdict('every workload has exactly one spec and one state row', ARRAY(
    SELECT coalesce(w.workload_id, s.workload_id) FROM workload.workloads w
    FULL JOIN workload.specs s ON s.workload_id = w.workload_id
    WHERE w.workload_id IS NULL OR s.workload_id IS NULL LIMIT 100));

-- ... and (1.3) every spec has its authority documents beside it, and nothing else does
SELECT to_regclass('workload.spec_authority') IS NULL AS no_authority_table \gset
\if :no_authority_table
\else
SELECT pg_temp.verdict('every spec has exactly one authority row, and every authority row a spec', ARRAY(
    SELECT coalesce(s.workload_id, a.tenant_id || '#' || a.workload_seq) FROM workload.specs s
    FULL JOIN workload.spec_authority a ON a.tenant_id = s.tenant_id AND a.workload_seq = s.workload_seq
    WHERE s.workload_id IS NULL OR a.workload_seq IS NULL LIMIT 100));
\endif

-- legal states: every event is an edge of the table, the history is a chain
-- from CREATED, and the row is where its last event left it
SELECT pg_temp.verdict('every event is a legal transition (workload_can_transition)', ARRAY(
    SELECT e.workload_id || ' #' || e.sequence || ' ' || e.from_state || '->' || e.to_state
    FROM rl_event_log e
    WHERE e.from_state IS NOT NULL AND NOT workload_can_transition(e.from_state, e.to_state)
    LIMIT 100));

SELECT pg_temp.verdict('each history starts with CREATED and each event starts where the previous ended', ARRAY(
    SELECT workload_id || ' #' || sequence || ' ' || coalesce(from_state::text, 'NULL') || '->' || to_state
        || ' after ' || coalesce(prev::text, 'nothing')
    FROM (SELECT e.*, lag(e.to_state) OVER (PARTITION BY e.workload_id ORDER BY e.sequence) AS prev,
                 row_number() OVER (PARTITION BY e.workload_id ORDER BY e.sequence) AS n
          FROM rl_event_log e) h
    WHERE (n = 1 AND (from_state IS NOT NULL OR to_state <> 'CREATED'))
       OR (n > 1 AND from_state IS DISTINCT FROM prev)
    LIMIT 100));

SELECT pg_temp.verdict('every workload is in the state its last event names', ARRAY(
    SELECT w.workload_id || ' is ' || w.state || ', last event ' || coalesce(l.to_state::text, 'none')
    FROM workload.workloads w
    LEFT JOIN LATERAL (SELECT e.to_state FROM rl_event_log e WHERE e.workload_id = w.workload_id
                       ORDER BY e.sequence DESC LIMIT 1) l ON true
    WHERE l.to_state IS DISTINCT FROM w.state LIMIT 100));

SELECT pg_temp.verdict('event sequences strictly increase along each workload''s history, in time order', ARRAY(
    SELECT workload_id || ' #' || sequence || ' at ' || at || ' before #' || prev_seq || ' at ' || prev_at
    FROM (SELECT e.workload_id, e.sequence, e.at,
                 lag(e.sequence) OVER w AS prev_seq, lag(e.at) OVER w AS prev_at
          FROM rl_event_log e WINDOW w AS (PARTITION BY e.workload_id ORDER BY e.sequence)) h
    WHERE prev_seq IS NOT NULL AND (sequence <= prev_seq OR at < prev_at)
    LIMIT 100));

SELECT pg_temp.verdict('events written after each restart have larger sequences than every event before it', ARRAY(
    SELECT 'event #' || e.sequence || ' at ' || e.at || ' <= ' || h.hwm || ' (restart ' || h.restart_at || ')'
    FROM rl_hwm h JOIN rl_event_log e ON e.at >= h.restart_at AND e.sequence <= h.hwm
    LIMIT 100));

-- results: exactly one per SUCCEEDED workload, none elsewhere, hash matches
SELECT pg_temp.verdict('every SUCCEEDED workload has exactly one result, and no other workload has one', ARRAY(
    SELECT w.workload_id || ' ' || w.state || ' has ' || count(r.result_id) || ' result(s)'
    FROM workload.workloads w LEFT JOIN workload.results r ON r.workload_id = w.workload_id
    GROUP BY w.workload_id, w.state
    HAVING count(r.result_id) <> CASE WHEN w.state = 'SUCCEEDED' THEN 1 ELSE 0 END
    UNION ALL
    SELECT 'orphan result ' || r.result_id FROM workload.results r
    WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.workload_id = r.workload_id)
    LIMIT 100));

SELECT pg_temp.verdict('every result''s output_hash is the SHA-256 of its output', ARRAY(
    SELECT r.result_id FROM workload.results r
    WHERE r.output_hash <> encode(sha256(convert_to(r.output::text, 'UTF8')), 'hex') LIMIT 100));

SELECT pg_temp.verdict('every result has exactly one completion event, naming its result and fencing token', ARRAY(
    SELECT r.result_id || ': ' || count(e.sequence) || ' completion event(s)'
    FROM workload.results r
    LEFT JOIN rl_event_log e ON e.workload_id = r.workload_id AND e.event_type = 'workload.completed'
        AND e.to_state = 'SUCCEEDED' AND e.evidence ->> 'result_id' = r.result_id
        AND (e.evidence ->> 'fencing_token')::bigint = r.fencing_token
    GROUP BY r.result_id HAVING count(e.sequence) <> 1
    UNION ALL
    SELECT e.workload_id || ' completed without a result' FROM rl_event_log e
    WHERE e.to_state = 'SUCCEEDED'
      AND NOT EXISTS (SELECT 1 FROM workload.results r WHERE r.workload_id = e.workload_id)
    LIMIT 100));

SELECT pg_temp.verdict('every result comes from the one SUCCEEDED attempt of its workload, under that attempt''s claim and token', ARRAY(
    SELECT r.result_id FROM workload.results r
    WHERE NOT EXISTS (SELECT 1 FROM rl_attempt_log a
        WHERE a.workload_id = r.workload_id AND a.attempt_number = r.attempt_number
          AND a.claim_id = r.claim_id AND a.worker_id = r.worker_id
          AND a.fencing_token = r.fencing_token AND a.outcome = 'SUCCEEDED')
    UNION ALL
    SELECT a.workload_id || ' has ' || count(*) || ' SUCCEEDED attempts' FROM rl_attempt_log a
    WHERE a.outcome = 'SUCCEEDED' GROUP BY a.workload_id HAVING count(*) > 1
    LIMIT 100));

-- claims and leases
SELECT pg_temp.verdict('after a tick, no workload holds a claim whose lease had expired', ARRAY(
    SELECT w.workload_id || ' lease ' || w.lease_expires_at FROM workload.workloads w
    WHERE w.claim_id IS NOT NULL AND w.lease_expires_at < :'tick_at'::timestamptz LIMIT 100));

SELECT pg_temp.verdict('a claim is held exactly in CLAIMED, RUNNING, CHECKPOINTED and CANCELLATION_REQUESTED', ARRAY(
    SELECT w.workload_id || ' ' || w.state || ' claim ' || coalesce(w.claim_id, 'none') FROM workload.workloads w
    WHERE (w.claim_id IS NOT NULL) <> (w.state IN ('CLAIMED', 'RUNNING', 'CHECKPOINTED', 'CANCELLATION_REQUESTED'))
    LIMIT 100));

SELECT pg_temp.verdict('a held claim is the workload''s one open attempt; every other attempt is closed', ARRAY(
    SELECT w.workload_id || ' claim ' || coalesce(w.claim_id, 'none') || ', open attempts '
        || (SELECT count(*) FROM rl_attempt_log a WHERE a.workload_id = w.workload_id AND a.finished_at IS NULL)
    FROM workload.workloads w
    WHERE (SELECT count(*) FROM rl_attempt_log a WHERE a.workload_id = w.workload_id AND a.finished_at IS NULL)
          <> CASE WHEN w.claim_id IS NULL THEN 0 ELSE 1 END
       OR (w.claim_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM rl_attempt_log a
            WHERE a.workload_id = w.workload_id AND a.finished_at IS NULL AND a.claim_id = w.claim_id
              AND a.fencing_token = w.fencing_token AND a.attempt_number = w.attempt_count))
    LIMIT 100));

SELECT pg_temp.verdict('fencing tokens only rise: attempts 1..n carry strictly increasing tokens, the last one is the workload''s', ARRAY(
    SELECT workload_id || ' attempt ' || attempt_number || ' token ' || fencing_token || ' after ' || prev
    FROM (SELECT a.*, lag(a.fencing_token) OVER (PARTITION BY a.workload_id ORDER BY a.attempt_number) AS prev,
                 row_number() OVER (PARTITION BY a.workload_id ORDER BY a.attempt_number) AS n
          FROM rl_attempt_log a) x
    WHERE attempt_number <> n OR fencing_token <= coalesce(prev, 0)
       OR claim_id <> workload.claim_id_for(workload_id, fencing_token, worker_id)
    UNION ALL
    SELECT w.workload_id || ' token ' || w.fencing_token || ', attempts ' || w.attempt_count
        || ' vs ' || coalesce(max(a.fencing_token), 0) || '/' || count(a.*)
    FROM workload.workloads w LEFT JOIN rl_attempt_log a ON a.workload_id = w.workload_id
    GROUP BY w.workload_id, w.fencing_token, w.attempt_count
    HAVING w.fencing_token <> coalesce(max(a.fencing_token), 0) OR w.attempt_count <> count(a.*)
    LIMIT 100));

SELECT pg_temp.verdict('claim events carry strictly increasing fencing tokens along each history', ARRAY(
    SELECT workload_id || ' #' || sequence || ' token ' || tok || ' after ' || prev
    FROM (SELECT e.workload_id, e.sequence, (e.evidence ->> 'fencing_token')::bigint AS tok,
                 lag((e.evidence ->> 'fencing_token')::bigint) OVER (PARTITION BY e.workload_id ORDER BY e.sequence) AS prev
          FROM rl_event_log e WHERE e.to_state = 'CLAIMED') c
    WHERE tok IS NULL OR tok <= coalesce(prev, 0)
    LIMIT 100));

SELECT pg_temp.verdict('no workload was claimed before its dependencies reached their final required state', ARRAY(
    SELECT d.workload_id || ' ran before ' || d.depends_on || ' was ' || d.required_state
    FROM workload.dependencies d
    JOIN LATERAL (SELECT min(e.sequence) AS s FROM rl_event_log e
                  WHERE e.workload_id = d.workload_id AND e.to_state = 'CLAIMED') c ON c.s IS NOT NULL
    WHERE d.required_state IN ('SUCCEEDED', 'CANCELLED')
      AND NOT EXISTS (SELECT 1 FROM rl_event_log e WHERE e.workload_id = d.depends_on
                      AND e.to_state = d.required_state AND e.sequence < c.s)
    LIMIT 100));

-- what clients and workers were told (recorded outside the database)
SELECT '# driver records: ' || (SELECT count(*) FROM rl_creates) || ' acknowledged creates, '
    || (SELECT count(*) FROM rl_acks) || ' acknowledged completions, '
    || (SELECT count(*) FROM rl_claims) || ' acknowledged claims';

SELECT pg_temp.verdict('every workload a client saw created still exists', ARRAY(
    SELECT DISTINCT c.workload_id FROM rl_creates c
    WHERE NOT EXISTS (SELECT 1 FROM workload.workloads w WHERE w.workload_id = c.workload_id) LIMIT 100));

SELECT pg_temp.verdict('every completion a worker saw acknowledged still exists: SUCCEEDED, with that result, hash and token', ARRAY(
    SELECT k.workload_id || ' ' || k.result_id || ': ' || coalesce(w.state::text, 'missing') || ' '
        || coalesce(r.result_id, 'no result')
    FROM rl_acks k
    LEFT JOIN workload.workloads w ON w.workload_id = k.workload_id
    LEFT JOIN workload.results r ON r.workload_id = k.workload_id
    WHERE w.state IS DISTINCT FROM 'SUCCEEDED' OR r.result_id IS DISTINCT FROM k.result_id
       OR r.output_hash IS DISTINCT FROM k.output_hash OR r.fencing_token IS DISTINCT FROM k.fencing_token
    LIMIT 100));

SELECT pg_temp.verdict('no workload was acknowledged complete under two different claims', ARRAY(
    SELECT workload_id || ' acknowledged under tokens ' || string_agg(DISTINCT fencing_token::text, ',')
    FROM rl_acks GROUP BY workload_id HAVING count(DISTINCT fencing_token) > 1 LIMIT 100));

SELECT pg_temp.verdict('every claim a worker saw is an attempt with that claim id and token', ARRAY(
    SELECT c.workload_id || ' token ' || c.fencing_token FROM rl_claims c
    WHERE NOT EXISTS (SELECT 1 FROM rl_attempt_log a WHERE a.workload_id = c.workload_id
                      AND a.fencing_token = c.fencing_token AND a.claim_id = c.claim_id)
    LIMIT 100));

SELECT pg_temp.verdict('no two claims a worker saw share a workload and a fencing token', ARRAY(
    SELECT workload_id || ' token ' || fencing_token || ' seen ' || count(*) || ' times'
    FROM rl_claims GROUP BY workload_id, fencing_token HAVING count(*) > 1 LIMIT 100));

COMMIT;
