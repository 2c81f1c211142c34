select `message_id` from `user_message_starred` where `user_id` = ? order by `message_id` asc limit ?;
