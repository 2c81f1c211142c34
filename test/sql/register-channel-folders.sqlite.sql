select * from `channel_folders` where `realm_id` = ? order by `order` asc, `id` asc;
