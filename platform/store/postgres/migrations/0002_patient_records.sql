-- VetLens schema version 2: patient records, their audit trail, and the
-- measured image kept beside a history entry (so it can be reopened and
-- corrected).

CREATE TABLE patients (
	id     text PRIMARY KEY,
	name   text NOT NULL,      -- for search; the record's JSON holds every field
	record json NOT NULL
);

-- The trail of changes to patient records and their history; append-only.
CREATE TABLE audit (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	patient_id text NOT NULL,
	event      json NOT NULL
);
CREATE INDEX audit_patient ON audit (patient_id, seq);
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION vetlens_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION vetlens_append_only();

-- The image a history entry was measured on (desktop saves).
CREATE TABLE history_images (
	history_seq bigint PRIMARY KEY REFERENCES history (seq),
	image       bytea NOT NULL
);

-- A USG screening removed from the patient's view: the log itself stays
-- append-only, the mark lives beside it.
CREATE TABLE usg_log_hidden (
	usg_seq bigint PRIMARY KEY REFERENCES usg_log (seq),
	hidden  json NOT NULL
);
