-- VetLens schema version 1: the records of app/repo.
--
-- Times are timestamptz (microseconds). Text is UTF-8. The ledger and the
-- USG prediction log are append-only: triggers refuse UPDATE, DELETE and
-- TRUNCATE on them.

CREATE TABLE api_keys (
	prefix   text PRIMARY KEY,
	hash     bytea NOT NULL,          -- SHA-256 of the whole key; the key itself is never stored
	customer text NOT NULL,
	created  timestamptz NOT NULL,
	revoked  timestamptz              -- NULL while active
);

CREATE TABLE customers (
	name                     text PRIMARY KEY,
	tier                     text NOT NULL,
	enterprise_single_cents  bigint NOT NULL DEFAULT 0,
	enterprise_session_cents bigint NOT NULL DEFAULT 0,
	created                  timestamptz NOT NULL
);

-- One row per billable response. id is the response's idempotency key
-- (a UUIDv7): a retried bill finds it and appends nothing.
CREATE TABLE ledger (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            uuid NOT NULL UNIQUE,
	time          timestamptz NOT NULL,
	customer      text NOT NULL,
	month         text NOT NULL,      -- billing period YYYY-MM (UTC)
	key_prefix    text NOT NULL,
	service       text NOT NULL,
	call_type     text NOT NULL,
	uuid          text NOT NULL,      -- the patient id sent, '' when none
	recheck_uuid  text,               -- the patient id the 24 h recheck keys on; NULL when none
	tier          text NOT NULL,
	rate_cents    bigint NOT NULL CHECK (rate_cents >= 0),
	monthly_usage integer NOT NULL CHECK (monthly_usage > 0)
);
CREATE INDEX ledger_customer_month ON ledger (customer, month) INCLUDE (rate_cents);
CREATE INDEX ledger_recheck ON ledger (customer, recheck_uuid, time) WHERE recheck_uuid IS NOT NULL;

-- Cardiac measurements per (customer, uuid); entry is the record's JSON.
CREATE TABLE history (
	seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id       uuid NOT NULL UNIQUE,
	customer text NOT NULL,
	uuid     text NOT NULL,
	time     timestamptz NOT NULL,
	entry    json NOT NULL
);
CREATE INDEX history_pair ON history (customer, uuid, seq);
CREATE INDEX history_uuid ON history (uuid, time, seq);

CREATE TABLE usg_log (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            uuid NOT NULL UNIQUE,
	time          timestamptz NOT NULL,
	customer      text NOT NULL,
	key_prefix    text NOT NULL,
	clinic_code   text NOT NULL,
	uuid          text NOT NULL,
	inputs        json NOT NULL,
	outputs       json NOT NULL,
	model_version text NOT NULL
);
CREATE INDEX usg_log_uuid ON usg_log (uuid, seq);

CREATE FUNCTION vetlens_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'vetlens: % is append-only (% refused)', TG_TABLE_NAME, TG_OP;
END
$$;
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
	FOR EACH ROW EXECUTE FUNCTION vetlens_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
	FOR EACH STATEMENT EXECUTE FUNCTION vetlens_append_only();
CREATE TRIGGER usg_log_append_only BEFORE UPDATE OR DELETE ON usg_log
	FOR EACH ROW EXECUTE FUNCTION vetlens_append_only();
CREATE TRIGGER usg_log_no_truncate BEFORE TRUNCATE ON usg_log
	FOR EACH STATEMENT EXECUTE FUNCTION vetlens_append_only();
