-- c_seq.sql: where nextval() is drawn for identity, bigserial and explicit nextval columns
-- of a distributed table, by who executes the INSERT.
DROP TABLE IF EXISTS m.ev_ident, m.ev_serial, m.ev_nextval;
DROP SEQUENCE IF EXISTS m.ev_seq;
CREATE TABLE m.ev_ident (tenant_id text NOT NULL, sequence bigint GENERATED ALWAYS AS IDENTITY, how text, PRIMARY KEY (tenant_id, sequence));
CREATE TABLE m.ev_serial (tenant_id text NOT NULL, sequence bigserial, how text, PRIMARY KEY (tenant_id, sequence));
CREATE SEQUENCE m.ev_seq;
CREATE TABLE m.ev_nextval (tenant_id text NOT NULL, sequence bigint NOT NULL, how text, PRIMARY KEY (tenant_id, sequence));
SELECT create_distributed_table(t, 'tenant_id', colocate_with := 'm.workloads') FROM unnest(ARRAY['m.ev_ident', 'm.ev_serial', 'm.ev_nextval']) t;
