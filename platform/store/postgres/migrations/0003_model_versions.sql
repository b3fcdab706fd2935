-- VetLens schema version 3: the cardiac model versions a clinic promoted
-- (issue 16, docs/learning.md) and the one in use, so that every server
-- sharing this database measures with the same models. A version's files
-- are kept here too, so a server that did not train it can fetch it.

CREATE TABLE model_versions (
	version    text PRIMARY KEY,
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE model_version_files (
	version text NOT NULL REFERENCES model_versions (version),
	name    text NOT NULL,   -- path inside the version folder, '/'-separated
	data    bytea NOT NULL,
	PRIMARY KEY (version, name)
);

-- A promoted version is immutable: its files are never changed or removed.
CREATE TRIGGER model_version_files_append_only BEFORE UPDATE OR DELETE ON model_version_files
	FOR EACH ROW EXECUTE FUNCTION vetlens_append_only();

-- The active version: one row; '' is the shipped models.
CREATE TABLE model_active (
	singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	version    text NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
