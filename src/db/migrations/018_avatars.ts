import type { Knex } from 'knex';

/**
 * users.avatar_hash: the file name (without extension) of the user's
 * uploaded avatar, set with avatar_source 'U'; null while the avatar is the
 * Gravatar one. It is an HMAC of the user id and avatar version under the
 * server secret, kept here so that every serializer can build the avatar URL
 * without the secret, and so that the URL is not guessable.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.string('avatar_hash', 40).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('avatar_hash');
  });
}
