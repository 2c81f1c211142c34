select `v`.`user_id`, `v`.`field_id`, `v`.`value`, `v`.`rendered_value` from `custom_profile_values` as `v` inner join `users` as `u` on `u`.`id` = `v`.`user_id` where `u`.`realm_id` = ?;
