select * from `channels` where `realm_id` = ? order by `id` asc;
