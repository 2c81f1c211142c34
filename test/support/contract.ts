import Ajv, { ValidateFunction } from 'ajv';
import type { SpecIndex } from '../../src/http/spec';
import { matchRoute } from '../../src/http/spec';

/**
 * Checks every response a test receives against openapi/: the operation's
 * declared response for that status must exist and the body must match its
 * schema. Responses outside any operation (404/405) must still be Zulip
 * error bodies.
 */
export class ContractChecker {
  private ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  private cache = new Map<string, ValidateFunction>();

  constructor(private readonly spec: SpecIndex) {}

  check(method: string, url: string, status: number, body: unknown): void {
    const path = new URL(url, 'http://x').pathname.replace(/^\/api\/v1/, '');
    const match = matchRoute(this.spec, path, method);
    if (match.kind !== 'operation') {
      assertErrorBody(body, `${method} ${url} → ${status}`);
      return;
    }
    const op = match.info.op;
    const responses = op.responses as Record<string, { content?: Record<string, { schema?: object }> }>;
    const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (status === 501) return; // pending operation (src/http/routes.ts)
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
  }
}

function assertErrorBody(body: unknown, what: string): void {
  const b = body as Record<string, unknown>;
  if (b?.result !== 'error' || typeof b.msg !== 'string' || typeof b.code !== 'string') {
    throw new Error(`${what}: not a Zulip error body: ${JSON.stringify(body)}`);
  }
}
