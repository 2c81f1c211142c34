'use strict';
/*
 * Scenarios for a bot's storage (GET, PUT and DELETE /bot_storage). The demo
 * organization has no bot and Parley no endpoint that makes one: a member is
 * made for it and turned into a bot in the database, a fixture as in the jest
 * tests (its API key is fetched while it can still log in with a password).
 */
const { api, fresh, refusal, unauthenticated } = require('./core');
const { runSql } = require('./database');

/** The scenarios' bot, made once: its address, API key and ID. */
async function storageBot(s) {
  if (s.storageBot) return s.storageBot;
  const email = fresh('storage-bot');
  const password = 'scenario-password-1';
  const made = await api(s, 'POST', '/users', { email, password, full_name: 'Storage Bot' }, s.users.owner);
  if (made.status !== 200) throw new Error(`create-user failed: ${JSON.stringify(made.body)}`);
  const key = await api(s, 'POST', '/fetch_api_key', { username: email, password });
  if (key.status !== 200) throw new Error(`fetch-api-key failed: ${JSON.stringify(key.body)}`);
  await runSql('UPDATE users SET is_bot = ?, bot_type = ? WHERE id = ?', [1, 1, made.body.user_id]);
  s.storageBot = { email, api_key: key.body.api_key, id: made.body.user_id };
  return s.storageBot;
}

/** As the bot, with `greeting` stored (the contract's examples read and remove it). */
const asBotWithGreeting = async (req, s) => {
  const bot = await storageBot(s);
  const res = await api(s, 'PUT', '/bot_storage', { storage: { greeting: 'hello' } }, bot);
  if (res.status !== 200) throw new Error(`update-bot-storage failed: ${JSON.stringify(res.body)}`);
  req.user = bot;
};

const missingKey = refusal('BAD_REQUEST', 'Key does not exist.', async (req, s) => {
  req.user = await storageBot(s);
  req.query = { keys: ['never-stored'] };
  req.body = { keys: ['never-stored'] };
});

const scenarios = {
  'get-bot-storage': {
    200: async (req, s) => {
      await asBotWithGreeting(req, s);
      req.query = { keys: ['greeting'] };
    },
    400: missingKey,
    401: unauthenticated(),
  },
  'update-bot-storage': {
    200: async (req, s) => {
      req.user = await storageBot(s);
    },
    400: refusal('BAD_REQUEST', 'Must be a bot user', (req, s) => {
      req.user = s.users.member2;
    }),
    401: unauthenticated(),
  },
  'remove-bot-storage': {
    200: asBotWithGreeting,
    400: missingKey,
    401: unauthenticated(),
  },
};

module.exports = { scenarios };
