-- The baseline for `flagpole export`: the sqlite3 shell building the same features.json
-- from the tables with one json_group_array(json_object(...)) query.
--
-- It reads what flagpole's own renderer reads (features in position order, archived ones
-- left out, each with its variations as arrays cut to the lengths written in the file,
-- the unknown keys merged back, the document's other top-level keys around "features"),
-- so the two outputs decode to the same JSON; Scripts/bench checks that they do.
--
-- json_patch('{}', obj) drops the members whose value is NULL: an absent key stays absent,
-- as flagpole writes it. (A JSON null inside an array, e.g. a label, is kept: arrays are
-- replaced whole by json_patch.) Key order and layout differ from flagpole's (SQLite 3.40
-- has no json_pretty); only the content must match.
-- :slug and :env are replaced by Scripts/bench before it runs this file.
SELECT json_patch(
    (SELECT json_group_object(key, json(value_json))
       FROM (SELECT key, value_json FROM document_extras x
              WHERE x.tenant_id = e.tenant_id AND x.environment_id = e.id ORDER BY x.position)),
    json_object('features', json((
        SELECT json_group_array(json(feature)) FROM (
            SELECT json_patch(json_patch('{}', json_object(
                'name', f.name,
                'description', f.description,
                'section', f.section,
                'development', json(CASE f.development WHEN 1 THEN 'true' WHEN 0 THEN 'false' END),
                'enabled', json(CASE f.enabled WHEN 1 THEN 'true' WHEN 0 THEN 'false' END),
                'unlocked', json(CASE f.unlocked WHEN 1 THEN 'true' WHEN 0 THEN 'false' END),
                'type', json(f.type_json),
                'test-variations', json(CASE WHEN f.variation_count IS NOT NULL THEN (
                    SELECT json_group_array(name) FROM (
                        SELECT v.name FROM variations v
                         WHERE v.tenant_id = f.tenant_id AND v.feature_id = f.id AND v.position < f.variation_count
                         ORDER BY v.position)) END),
                'test-biases', json(CASE WHEN f.bias_count IS NOT NULL THEN (
                    SELECT json_group_array(bias) FROM (
                        SELECT v.bias FROM variations v
                         WHERE v.tenant_id = f.tenant_id AND v.feature_id = f.id AND v.position < f.bias_count
                         ORDER BY v.position)) END),
                'labels', json(CASE WHEN f.label_count IS NOT NULL THEN (
                    SELECT json_group_array(label) FROM (
                        SELECT v.label FROM variations v
                         WHERE v.tenant_id = f.tenant_id AND v.feature_id = f.id AND v.position < f.label_count
                         ORDER BY v.position)) END)
            )), coalesce(f.unknown_json, '{}')) AS feature
              FROM features f
             WHERE f.tenant_id = e.tenant_id AND f.environment_id = e.id AND f.archived_at IS NULL
             ORDER BY f.position)
    )))
)
  FROM environments e JOIN tenants t ON t.id = e.tenant_id
 WHERE t.slug = ':slug' AND e.name = ':env';
