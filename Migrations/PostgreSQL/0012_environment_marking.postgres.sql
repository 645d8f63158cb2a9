-- Flagpole schema, version 12, for PostgreSQL (types as in 0001): how an environment is marked for
-- the people who change it, so that nobody mistakes production for staging.

-- A colour the dashboard shows the environment in, `#rrggbb` in lowercase; NULL: none.
ALTER TABLE environments ADD COLUMN colour text COLLATE "C" CHECK (colour ~ '^#[0-9a-f]{6}$');
-- Whether a change here should carry a reason (production, typically).
ALTER TABLE environments ADD COLUMN requires_reason boolean NOT NULL DEFAULT false;
