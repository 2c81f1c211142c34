select `r`.`presence_disabled`, `p`.`user_id`, `p`.`last_active_time`, `p`.`last_connected_time` from `realms` as `r` left join `user_presence` as `p` on `p`.`user_id` = ? where `r`.`id` = ? limit ?;
