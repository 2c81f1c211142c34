'use strict';
/*
 * Scenarios for incoming webhooks (POST /external/{integration_name}). The
 * body is the service's own JSON, sent as is (`req.rawBody`, hooks.js); the
 * API key goes in the query string, as services are given it. Without a
 * channel the message is a direct message to the caller's bot owner, or to
 * the caller itself (the demo owner is no bot).
 */
const { refusal } = require('./core');

const asService =
  (integration, body, query = {}) =>
  (req, s) => {
    req.user = null;
    req.pathParams = { integration_name: integration };
    req.query = { api_key: s.users.owner.api_key, ...query };
    req.rawBody = JSON.stringify(body);
    req.contentType = 'application/json';
  };

const scenarios = {
  'incoming-webhook': {
    200: asService('json', { deploy: 'finished', build: 812 }),
    400: refusal(
      'REQUEST_VARIABLE_MISSING',
      "Missing 'api_key' argument",
      (req, s) => {
        asService('json', { deploy: 'finished' })(req, s);
        req.query = {};
      },
      { var_name: 'api_key' },
    ),
    401: refusal('UNAUTHORIZED', 'Invalid API key', (req, s) => {
      asService('json', { deploy: 'finished' })(req, s);
      req.query = { api_key: 'x'.repeat(32) };
    }),
    404: refusal('BAD_REQUEST', 'Endpoint does not exist', (req, s) => {
      asService('json', { deploy: 'finished' })(req, s);
      req.pathParams = { integration_name: 'no-such-service' };
    }),
  },
};

module.exports = { scenarios };
