WITH RECURSIVE g(id) AS (
    SELECT gm.group_id FROM group_members gm JOIN users u ON u.id = gm.user_id WHERE gm.user_id = ? AND u.is_active = 1
    UNION SELECT gs.supergroup_id FROM group_subgroups gs JOIN g ON gs.subgroup_id = g.id
  )
     SELECT 1 AS kind, id FROM g
     UNION ALL
     SELECT 2 AS kind, s.recipient_id AS id FROM subscriptions s JOIN channels c ON c.recipient_id = s.recipient_id WHERE s.user_id = ? AND s.active = 1 AND c.realm_id = ?;
