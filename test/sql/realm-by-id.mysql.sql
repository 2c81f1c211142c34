select * from `realms` where `id` = ? limit ?;
