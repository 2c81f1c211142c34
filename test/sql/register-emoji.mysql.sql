select `id`, `name`, `file_name`, `author_id`, `deactivated`, `is_animated` from `realm_emoji` where `realm_id` = ? order by `id` asc;
