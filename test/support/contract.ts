import Ajv, { ValidateFunction } from 'ajv';
import { appendFileSync } from 'node:fs';
import type { SpecIndex } from '../../src/http/spec';
import { matchRoute } from '../../src/http/spec';
import { OPERATION_ERRORS, OUTSIDE_OPERATION_ERRORS } from '../../generated/errors';

const compiledBySpec = new WeakMap<SpecIndex, { ajv: Ajv; cache: Map<string, ValidateFunction> }>();

/**
 * Checks every response a test receives against openapi/: the operation's
 * declared response for that status must exist and the body must match its
 * schema, and an error's code must be one the operation declares at that
 * status (generated/errors.ts; ADR 0036). Responses outside any operation
 * (404/405, 501 for a pending one) must still be Zulip error bodies with a
 * code the contract declares for such answers.
 */
export class ContractChecker {
  private readonly ajv: Ajv;
  private readonly cache: Map<string, ValidateFunction>;

  constructor(private readonly spec: SpecIndex) {
    // Checkers of one contract share its compiled schemas: a test file makes a checker per
    // test server (and some per request), and compiling a response schema costs far more
    // than checking a body against it.
    let compiled = compiledBySpec.get(spec);
    if (!compiled) {
      compiled = { ajv: new Ajv({ strict: false, allErrors: true, validateFormats: false }), cache: new Map() };
      compiledBySpec.set(spec, compiled);
    }
    this.ajv = compiled.ajv;
    this.cache = compiled.cache;
  }

  check(method: string, url: string, status: number, body: unknown): void {
    const pathname = new URL(url, 'http://x').pathname;
    const path = pathname.replace(/^\/(api\/v1|json)(?=\/|$)/, '');
    const match = matchRoute(this.spec, path, method);
    // The web client's /json refuses a request without its CSRF token before the operation (ADR 0053).
    const csrfRefusal = status === 403 && pathname.startsWith('/json/');
    if (match.kind !== 'operation' || csrfRefusal) {
      assertErrorBody(body, `${method} ${url} → ${status}`);
      assertDeclaredCode(OUTSIDE_OPERATION_ERRORS, status, body, `${method} ${url} (no operation)`);
      return;
    }
    const op = match.info.op;
    const responses = op.responses as Record<string, { content?: Record<string, { schema?: object }> }>;
    const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (status === 501) {
      // A pending operation (src/http/routes.ts).
      assertErrorBody(body, `${method} ${url} → ${status}`);
      assertDeclaredCode(OUTSIDE_OPERATION_ERRORS, status, body, `${method} ${url} (pending)`);
      return;
    }
    if (!declared) {
      throw new Error(`${method} ${url}: status ${status} is not declared for ${match.info.operationId}. Body: ${JSON.stringify(body)}`);
    }
    const schema = declared.content?.['application/json']?.schema;
    if (!schema) return;
    const key = `${match.info.operationId} ${status}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.cache.set(key, validate);
    }
    if (!validate(body)) {
      const errors = this.ajv.errorsText(validate.errors, { separator: '\n  ' });
      throw new Error(
        `${method} ${url} → ${status} does not match openapi (${key}):\n  ${errors}\nBody: ${JSON.stringify(body).slice(0, 2000)}`,
      );
    }
    if (status >= 400) {
      const byStatus: Record<number, readonly string[]> | undefined = (
        OPERATION_ERRORS as Record<string, Record<number, readonly string[]>>
      )[match.info.operationId];
      assertDeclaredCode(byStatus ?? {}, status, body, `${method} ${url} (${match.info.operationId})`);
    }
  }
}

/**
 * The error body's code is one the contract declares at this status, for
 * this operation (or for answers outside operations). A free-text `code`
 * (CodedError) would pass the schema whatever it said; this is the check
 * that it says something a client was told to expect. With
 * CONTRACT_CODES_REPORT=<file> a violation is appended to the file instead
 * of failing the test: a survey of many test files in one run.
 */
function assertDeclaredCode(declared: Record<number, readonly string[]>, status: number, body: unknown, what: string): void {
  const code = (body as { code?: unknown } | null)?.code;
  const codes = declared[status] ?? [];
  if (typeof code === 'string' && codes.includes(code)) return;
  const violation = `${what} → ${status} ${String(code)}: not a code declared for it (declared: ${codes.join(', ') || 'none'})`;
  const report = process.env.CONTRACT_CODES_REPORT;
  if (report) {
    appendFileSync(report, `${violation}\n`);
    return;
  }
  throw new Error(`${violation}. Declare it in openapi/ (docs/openapi-conventions.md) or answer a declared one.`);
}

function assertErrorBody(body: unknown, what: string): void {
  const b = body as Record<string, unknown>;
  if (b?.result !== 'error' || typeof b.msg !== 'string' || typeof b.code !== 'string') {
    throw new Error(`${what}: not a Zulip error body: ${JSON.stringify(body)}`);
  }
}
