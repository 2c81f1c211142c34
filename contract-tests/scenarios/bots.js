'use strict';
/* Scenarios for bot accounts (/bots). Each change acts on a bot made for it by a demo member. */
const { api, refusal, unauthenticated } = require('./core');

let serial = 0;
const unique = (prefix) => `${prefix}${Date.now().toString(36)}${serial++}`;

/** A new generic bot owned by the demo member; its ID. */
async function freshBotId(s) {
  const res = await api(s, 'POST', '/bots', { full_name: unique('Scenario bot '), short_name: unique('scenario') }, s.users.member);
  if (res.status !== 200) throw new Error(`add-bot failed: ${JSON.stringify(res.body)}`);
  return res.body.user_id;
}

/** The member names someone who is not a bot: Zulip's access_bot_by_id refusal. */
const noSuchBot = refusal('BAD_REQUEST', 'No such bot', (req, s) => {
  req.user = s.users.member;
  req.pathParams.bot_id = s.users.member2.id;
});

const onFreshBot = (body) => async (req, s) => {
  req.user = s.users.member;
  req.pathParams.bot_id = await freshBotId(s);
  if (body) req.body = body();
};

const scenarios = {
  'get-bots': {
    200: (req, s) => {
      req.user = s.users.member;
    },
    400: refusal('BAD_REQUEST', 'Not allowed for guest users', (req, s) => {
      req.user = s.users.guest;
    }),
    401: unauthenticated(),
  },
  'add-bot': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { full_name: unique('Deploy notices '), short_name: unique('deploy'), bot_type: 2 };
    },
    400: refusal('BAD_REQUEST', 'Not allowed for guest users', (req, s) => {
      req.user = s.users.guest;
      req.body = { full_name: unique('Guest bot '), short_name: unique('guest') };
    }),
    401: unauthenticated(),
  },
  'update-bot': {
    200: onFreshBot(() => ({ full_name: unique('Renamed bot ') })),
    400: noSuchBot,
    401: unauthenticated((req, s) => {
      req.pathParams.bot_id = s.users.member.id;
    }),
  },
  'deactivate-bot': {
    200: onFreshBot(),
    400: noSuchBot,
    401: unauthenticated((req, s) => {
      req.pathParams.bot_id = s.users.member.id;
    }),
  },
  'get-bot-api-key': {
    200: onFreshBot(),
    400: noSuchBot,
    401: unauthenticated((req, s) => {
      req.pathParams.bot_id = s.users.member.id;
    }),
  },
  'regenerate-bot-api-key': {
    200: onFreshBot(),
    400: noSuchBot,
    401: unauthenticated((req, s) => {
      req.pathParams.bot_id = s.users.member.id;
    }),
  },
};

module.exports = { scenarios };
