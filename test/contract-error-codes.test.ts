import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { OPERATION_ERRORS, OUTSIDE_OPERATION_ERRORS } from '../generated/errors';
import { ContractChecker } from './support/contract';
import type { TestServer } from './support/server';
import { startTestServer, testSpec } from './support/server';

/**
 * Errors typed from the contract (ADR 0036): generated/errors.ts is what
 * scripts/gen-errors.js makes of openapi/, it knows every operation and every
 * error status the operation declares, and the contract check every jest
 * response goes through (test/support/contract.ts; dredd's hooks do the same)
 * refuses an error whose code the operation does not declare.
 */
const ROOT = path.join(__dirname, '..');
const byOperation = OPERATION_ERRORS as Record<string, Record<string, readonly string[]>>;

describe('error codes from the contract', () => {
  it('generated/errors.ts is up to date with openapi/', () => {
    expect(() => execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-errors.js'), '--check'], { stdio: 'pipe' })).not.toThrow();
  });

  it('declares codes for every error status of every operation, and for answers outside operations', async () => {
    const spec = await testSpec();
    const fromSpec: Record<string, string[]> = {};
    for (const { operationId, op } of spec.operations) {
      fromSpec[operationId] = Object.keys(op.responses ?? {})
        .filter((s) => /^[45]/.test(s))
        .sort();
    }
    const generated = Object.fromEntries(Object.entries(byOperation).map(([id, s]) => [id, Object.keys(s).sort()]));
    expect(generated).toEqual(fromSpec);
    for (const codes of Object.values(byOperation).flatMap((s) => Object.values(s))) expect(codes.length).toBeGreaterThan(0);
    expect(OUTSIDE_OPERATION_ERRORS).toMatchObject({ 404: ['BAD_REQUEST'], 405: ['METHOD_NOT_ALLOWED'], 501: ['NOT_IMPLEMENTED'] });
  });

  it('the contract check refuses an error code the operation does not declare, at that status', async () => {
    const checker = new ContractChecker(await testSpec());
    // A survey run (CONTRACT_CODES_REPORT) lists violations instead of failing; not here.
    const report = process.env.CONTRACT_CODES_REPORT;
    delete process.env.CONTRACT_CODES_REPORT;
    try {
      const url = '/api/v1/messages/1';
      expect(() => checker.check('get', url, 400, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' })).not.toThrow();
      // A body the schema (CodedError: any code) admits, with a code get-message never answers.
      expect(() =>
        checker.check('get', url, 400, { result: 'error', msg: 'Reaction already exists.', code: 'REACTION_ALREADY_EXISTS' }),
      ).toThrow(/get-message\) → 400 REACTION_ALREADY_EXISTS: not a code declared for it \(declared: BAD_REQUEST\)/);
      // A code the operation declares, but at another status.
      expect(() => checker.check('get', url, 401, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' })).toThrow(
        /401 BAD_REQUEST: not a code declared/,
      );
      // Outside any operation: an unknown path's 404 is BAD_REQUEST, nothing else.
      const nowhere = '/api/v1/nowhere';
      expect(() =>
        checker.check('get', nowhere, 404, { result: 'error', msg: 'Endpoint does not exist', code: 'BAD_REQUEST' }),
      ).not.toThrow();
      expect(() => checker.check('get', nowhere, 404, { result: 'error', msg: 'Not found', code: 'NOT_FOUND' })).toThrow(
        /404 NOT_FOUND: not a code declared/,
      );
    } finally {
      if (report !== undefined) process.env.CONTRACT_CODES_REPORT = report;
    }
  });

  describe('on a real server', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer('sqlite');
    });
    afterAll(async () => {
      t.ctx.queues.close();
      await t.close();
    });

    // Each answer passes through the contract check of t.api, code included.
    it.each([
      ['get', '/messages/999999', 400, 'BAD_REQUEST'],
      ['post', '/messages', 400, 'REQUEST_VARIABLE_MISSING'],
      ['get', '/users/me', 401, 'UNAUTHORIZED'],
      ['get', '/no/such/endpoint', 404, 'BAD_REQUEST'],
      ['put', '/users/me', 405, 'METHOD_NOT_ALLOWED'],
    ] as const)('%s %s answers %i %s, a code it declares', async (method, p, status, code) => {
      const user = status === 401 ? null : t.cast.member;
      const res = await t.api.call(method, p, user, method === 'post' ? { type: 'stream', to: 'general' } : {});
      expect(res.status).toBe(status);
      expect(res.body.code).toBe(code);
    });
  });
});
