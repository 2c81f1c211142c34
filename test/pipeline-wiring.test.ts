import request from 'supertest';
import { buildApp } from '../src/app';
import { JSON_QUERY_PARAMS } from '../src/contract';
import type { HandlerTable } from '../src/http/handler';
import { HANDLERS, PENDING_OPERATIONS } from '../src/http/routes';
import { startTestServer, testSpec } from './support/server';

/**
 * The pipeline's wiring, checked once (not per database: those needing one
 * use SQLite): response validation, the handler and route tables against
 * the contract, and organizations chosen by subdomain.
 */
describe('response validation (VALIDATE_RESPONSES, used by dredd)', () => {
  it('turns a response that breaks the contract into a 500', async () => {
    const t = await startTestServer('sqlite');
    try {
      const ctx = { ...t.ctx, config: { ...t.ctx.config, validateResponses: true } };
      const broken: HandlerTable = { ...HANDLERS, 'get-own-user': async () => ({ user_id: 'not a number' }) as never };
      const app = buildApp({ ctx, spec: t.spec, handlers: broken });
      const bad = await request(app).get('/api/v1/users/me').auth(t.cast.member.email, t.cast.member.api_key);
      expect([bad.status, bad.body]).toEqual([500, { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }]);
      const good = await request(buildApp({ ctx, spec: t.spec }))
        .get('/api/v1/users/me')
        .auth(t.cast.member.email, t.cast.member.api_key);
      expect(good.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('handler types', () => {
  it('know every query parameter the contract sends as JSON (src/contract.ts JSON_QUERY_PARAMS)', async () => {
    const spec = await testSpec();
    const fromContract: Record<string, string[]> = {};
    for (const info of spec.operations) {
      const params = (info.op.parameters ?? []) as Array<{ in: string; name: string; content?: unknown }>;
      const json = params.filter((p) => p.in === 'query' && p.content).map((p) => p.name);
      if (json.length) fromContract[info.operationId] = json.sort();
    }
    const declared = Object.fromEntries(Object.entries(JSON_QUERY_PARAMS).map(([op, names]) => [op, [...names].sort()]));
    expect(declared).toEqual(fromContract);
  });
});

describe('route table', () => {
  it('has exactly one entry (handler, pending, or a router of its own) for every operation of openapi/', async () => {
    const spec = await testSpec();
    const ops = spec.operations.map((o) => o.operationId).sort();
    const handled = Object.keys(HANDLERS);
    const pending = [...PENDING_OPERATIONS];
    // Marked x-own-router in the contract (incoming webhooks).
    const elsewhere = spec.operations.filter((o) => o.ownRouter).map((o) => o.operationId);
    expect(elsewhere).toEqual(['incoming-webhook']);
    expect(handled.filter((h) => pending.includes(h as never) || elsewhere.includes(h as never))).toEqual([]);
    expect([...handled, ...pending, ...elsewhere].sort()).toEqual(ops);
  });
});

describe('organizations by subdomain', () => {
  it("authenticates an account only at its own organization's address", async () => {
    const t = await startTestServer('sqlite');
    try {
      const { doCreateRealm } = await import('../src/actions/realms');
      const { createUserInTx } = await import('../src/actions/users');
      const { inTransaction } = await import('../src/db/transaction');
      const betaId = await doCreateRealm(t.ctx.db, { stringId: 'beta', name: 'Beta' });
      const betaUser = await inTransaction(t.ctx.db, (tx) =>
        createUserInTx(tx, null, { realmId: betaId, email: 'b@example.com', fullName: 'Bea Beta' }),
      );
      const as = (host: string, u: { email: string; api_key: string }) =>
        request(t.app).get('/api/v1/users/me').set('Host', host).auth(u.email, u.api_key);
      const who = async (host: string, u: { email: string; api_key: string }) => {
        const res = await as(host, u);
        return [res.status, res.status === 200 ? res.body.user_id : res.body];
      };
      const invalidKey = { result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' };
      expect(await who('beta.chat.example', betaUser)).toEqual([200, betaUser.id]);
      expect(await who('chat.example', betaUser)).toEqual([401, invalidKey]);
      expect(await who('chat.example', t.cast.member)).toEqual([200, t.cast.member.id]);
      expect(await who('beta.chat.example', t.cast.member)).toEqual([401, invalidKey]);
    } finally {
      await t.close();
    }
  });
});
