SELECT 0 AS part, max(message_id) AS field_id, NULL AS value, NULL AS rendered_value FROM user_messages WHERE user_id = ?
     UNION ALL
     SELECT 1, field_id, value, rendered_value FROM custom_profile_values WHERE user_id = ?;
