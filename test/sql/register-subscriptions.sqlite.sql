select `s`.* from `subscriptions` as `s` inner join `recipients` as `r` on `r`.`id` = `s`.`recipient_id` where `s`.`user_id` = ? and `r`.`type` = ?;
