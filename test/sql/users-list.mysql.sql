select * from `users` where `realm_id` = ? order by `id` asc;
