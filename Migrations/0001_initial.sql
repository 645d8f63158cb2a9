-- Flagpole schema, version 1: tenants, environments, features with their variations,
-- the other top-level keys of each document, revisions and their audit trail.
--
-- Every row below a tenant carries tenant_id, and every foreign key below the tenant
-- includes it, so a row can never point into another tenant's data.
-- A shipped migration is never edited: change the schema in a new numbered file.

CREATE TABLE tenants (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE
        CHECK (length(slug) BETWEEN 1 AND 63 AND slug NOT GLOB '*[^a-z0-9-]*'),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE environments (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name TEXT NOT NULL
        CHECK (length(name) BETWEEN 1 AND 63 AND name NOT GLOB '*[^a-z0-9-]*'),
    -- Where "features" sits among the document's top-level keys.
    features_position INTEGER NOT NULL DEFAULT 0 CHECK (features_position >= 0),
    created_at TEXT NOT NULL,
    UNIQUE (tenant_id, name),
    UNIQUE (id, tenant_id)
);

CREATE TABLE features (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    -- File order; NULL once archived (absent from the current document).
    position INTEGER CHECK (position >= 0),
    -- Fixed at creation and kept through archive and return: it seeds user bucketing.
    salt TEXT NOT NULL,
    description TEXT,
    section TEXT,
    -- NULL means the key is absent from the file: the client's default applies.
    development INTEGER CHECK (development IN (0, 1)),
    enabled INTEGER CHECK (enabled IN (0, 1)),
    unlocked INTEGER CHECK (unlocked IN (0, 1)),
    type_json TEXT,
    -- Lengths of test-variations, test-biases and labels as written, NULL when absent;
    -- the elements are rows of variations (the three may differ in length).
    variation_count INTEGER CHECK (variation_count >= 0),
    bias_count INTEGER CHECK (bias_count >= 0),
    label_count INTEGER CHECK (label_count >= 0),
    -- Keys the client does not read, as a JSON object in their original order.
    unknown_json TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    archived_at TEXT,
    CHECK ((archived_at IS NULL) = (position IS NOT NULL)),
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE,
    UNIQUE (environment_id, name),
    UNIQUE (id, tenant_id)
);
CREATE INDEX features_in_order ON features(environment_id, position) WHERE archived_at IS NULL;

CREATE TABLE variations (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    -- Each is NULL past the end of its array; a NULL label inside labels is a JSON null.
    name TEXT,
    bias REAL,
    label TEXT,
    FOREIGN KEY (feature_id, tenant_id) REFERENCES features(id, tenant_id) ON DELETE CASCADE,
    UNIQUE (feature_id, position)
);

CREATE TABLE document_extras (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    key TEXT NOT NULL,
    value_json TEXT NOT NULL,
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE,
    UNIQUE (environment_id, key),
    UNIQUE (environment_id, position)
);

CREATE TABLE revisions (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    number INTEGER NOT NULL CHECK (number >= 1),
    kind TEXT NOT NULL CHECK (kind IN ('import', 'edit', 'bias', 'rollout', 'rollback', 'restore')),
    actor TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- The whole features.json as exported (4-space layout), so any revision can be
    -- served, diffed or restored without replaying history.
    document BLOB NOT NULL,
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE,
    UNIQUE (environment_id, number),
    UNIQUE (id, tenant_id)
);

CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    revision_id INTEGER NOT NULL,
    -- NULL for the document's own keys and the order of features.
    feature_name TEXT,
    -- NULL when the whole feature was added or removed.
    field TEXT,
    change TEXT NOT NULL CHECK (change IN ('added', 'removed', 'changed')),
    before_json TEXT,
    after_json TEXT,
    FOREIGN KEY (revision_id, tenant_id) REFERENCES revisions(id, tenant_id) ON DELETE CASCADE
);
CREATE INDEX audit_by_revision ON audit(revision_id);
CREATE INDEX audit_by_feature ON audit(feature_name, revision_id);
