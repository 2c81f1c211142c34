select * from `user_groups` where `realm_id` = ? order by `id` asc;
