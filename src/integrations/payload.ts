import { ApiError } from '../errors';

/**
 * A service's JSON payload, read with its path in every error: a field an
 * integration needs and the payload lacks (or has with another type) is
 * answered as Zulip answers it, a 400 naming the field, never a crash.
 * `payload.get('repository').get('full_name').str()` reads a required
 * string; `opt` reads a field that may be absent or null.
 */
export class Payload {
  constructor(
    readonly raw: unknown,
    readonly path: string = 'payload',
  ) {}

  /** Whether the field is present (and not null). */
  has(key: string): boolean {
    return this.isObject() && (this.raw as Record<string, unknown>)[key] != null;
  }

  /** A required field. */
  get(key: string): Payload {
    const found = this.opt(key);
    if (found === null) throw new ApiError(`${this.path}[${JSON.stringify(key)}] is missing`);
    return found;
  }

  /** A field that may be absent or null (then null). */
  opt(key: string): Payload | null {
    if (!this.isObject()) throw this.notA('a dict');
    const value = Object.prototype.hasOwnProperty.call(this.raw, key) ? (this.raw as Record<string, unknown>)[key] : undefined;
    return value == null ? null : new Payload(value, `${this.path}[${JSON.stringify(key)}]`);
  }

  /** A path of required fields, `get` after `get`. */
  at(...keys: string[]): Payload {
    return keys.reduce<Payload>((p, k) => p.get(k), this);
  }

  str(): string {
    if (typeof this.raw !== 'string') throw this.notA('a string');
    return this.raw;
  }

  /** A string, a number or a boolean, as text (services differ on ids). */
  text(): string {
    if (typeof this.raw === 'string' || typeof this.raw === 'number' || typeof this.raw === 'boolean') return String(this.raw);
    throw this.notA('a string');
  }

  int(): number {
    if (typeof this.raw !== 'number' || !Number.isInteger(this.raw)) throw this.notA('an integer');
    return this.raw;
  }

  num(): number {
    if (typeof this.raw !== 'number') throw this.notA('a number');
    return this.raw;
  }

  bool(): boolean {
    if (typeof this.raw !== 'boolean') throw this.notA('a boolean');
    return this.raw;
  }

  list(): Payload[] {
    if (!Array.isArray(this.raw)) throw this.notA('a list');
    return this.raw.map((v, i) => new Payload(v, `${this.path}[${i}]`));
  }

  /** The object's entries, each as a Payload. */
  entries(): Array<[string, Payload]> {
    if (!this.isObject()) throw this.notA('a dict');
    return Object.entries(this.raw as Record<string, unknown>).map(([k, v]) => [k, new Payload(v, `${this.path}[${JSON.stringify(k)}]`)]);
  }

  isObject(): boolean {
    return typeof this.raw === 'object' && this.raw !== null && !Array.isArray(this.raw);
  }

  private notA(what: string): ApiError {
    return new ApiError(`${this.path} is not ${what}`);
  }
}
