-- Flagpole schema, version 7: typed configs and tags, kept with each revision.
--
-- An environment's configs (and the tags of its features, which features.json has no place for)
-- are one small typed document, the configs file `flagpole config export` writes. Each revision
-- keeps it beside its features.json, so a revision is the whole state apps are served: a rollback
-- restores features and configs together, and a diff or an audit row covers both. The current
-- configs are those of the latest revision. NULL: the revision has neither configs nor tags.
ALTER TABLE revisions ADD COLUMN configs BLOB;

-- The config an audit row is about, for a revision that changes configs (feature_name is then
-- NULL, unless the row is about a feature's tags).
ALTER TABLE audit ADD COLUMN config_name TEXT;
