-- Flagpole schema, version 12: how an environment is marked for the people who change it, so
-- that nobody mistakes production for staging.

-- A colour the dashboard shows the environment in, `#rrggbb` in lowercase; NULL: none.
ALTER TABLE environments ADD COLUMN colour TEXT
    CHECK (colour IS NULL OR (length(colour) = 7 AND colour GLOB '#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'));
-- Whether a change here should carry a reason (production, typically).
ALTER TABLE environments ADD COLUMN requires_reason INTEGER NOT NULL DEFAULT 0 CHECK (requires_reason IN (0, 1));
