-- VetLens schema version 4: free recheck_24h outcomes (issue 46), which
-- the ledger does not hold (they are not billed). recheck_pairs counts a
-- (customer, uuid) pair's free rechecks since it was last billed (for the
-- optional cap); recheck_usage counts each key's free rechecks per month
-- (shown by `vetlens keys list`).

CREATE TABLE recheck_pairs (
	customer text NOT NULL,
	uuid     text NOT NULL,
	count    integer NOT NULL CHECK (count > 0),
	PRIMARY KEY (customer, uuid)
);

CREATE TABLE recheck_usage (
	key_prefix text NOT NULL,
	month      text NOT NULL,   -- YYYY-MM (UTC)
	count      integer NOT NULL CHECK (count > 0),
	PRIMARY KEY (key_prefix, month)
);
