import zlib from 'node:zlib';
import fc from 'fast-check';
import { PENDING_OPERATIONS } from '../../../src/http/routes';
import { HUGE_INTEGERS, parsesAsJson, Raw, toJsonText } from './json';
import {
  ADMINISTRATORS_ONLY,
  badEventTerms,
  badMessageTerms,
  BASE_VALUES,
  harmlessTerms,
  HUGE_ACCEPTED,
  missingIds,
  REFERENCES,
  REFUSED_COMBINATIONS,
  REFUSED_TEXT,
  type BadTerm,
  type Reference,
} from './knowledge';
import type { Field, OpModel } from './model';
import { nameLike, oddString, PROTOTYPE_KEYS } from './strings';
import { invalidValue, validValue } from './values';
import type { WireRequest } from './wire';
import { CALLERS, type Caller, type World } from './world';

/**
 * Malformed requests, one operation of the contract at a time: a
 * valid-looking base request (existing objects, schema-valid values with odd
 * strings), then one mutation that makes it certainly invalid (so a 4xx is
 * the only right answer), then up to two more mutations, certain or neutral
 * (duplicated and unknown parameters, stray multipart parts) that never make
 * it valid again.
 */

export type Layout = 'form' | 'multipart' | 'query' | 'split';
type AuthKind = 'none' | 'wrong key' | 'short key' | 'no colon' | 'bearer' | 'deactivated' | 'garbage' | "another's address";

/** The request being built: parameters as values until serialized. */
interface Draft {
  model: OpModel;
  world: World;
  method: string;
  caller: Caller;
  /** Query and body parameters present, as values (Raw tokens allowed inside). */
  values: Map<string, unknown>;
  /** Parameters whose text is given verbatim (unparsable JSON and the like). */
  texts: Map<string, string>;
  /** Path parameters: text to percent-encode, or Raw to send verbatim. */
  path: Map<string, string | Raw>;
  /** Extra occurrences: duplicates and undeclared parameters. */
  extras: Array<{ name: string; text: string; where: 'query' | 'body' | 'first' }>;
  layout: Layout;
  /** Set by the transport mutation that decided the body's form; later ones must agree. */
  layoutLocked: boolean;
  splitBits: number;
  auth: AuthKind | null;
  body: BodyMutation[];
  tags: string[];
  touched: Set<string>;
}

interface Mutation {
  /** Shown in the report and in a counterexample: what makes the request invalid. */
  tag: string;
  /** False when it does not apply to this draft (skipped, not tagged). */
  apply(d: Draft): boolean;
}

/** A change to the serialized body: its bytes, type and headers. */
interface BodyMutation {
  layout: 'form' | 'multipart';
  transform(body: SerializedBody): SerializedBody;
}

interface SerializedBody {
  contentType: string | null;
  bytes: Buffer | null;
  headers: Record<string, string>;
}

/** A generated request: what was done to it and the exact bytes sent. */
export class FuzzRequest {
  constructor(
    readonly operationId: string,
    readonly caller: string,
    readonly tags: readonly string[],
    readonly wire: WireRequest,
  ) {}

  /** As an HTTP/1.1 message (bodies escaped, long ones cut): what fast-check prints for a counterexample. */
  toString(): string {
    const head = [`${this.wire.method} ${this.wire.target} HTTP/1.1`, ...Object.entries(this.wire.headers).map(([k, v]) => `${k}: ${v}`)];
    const body = this.wire.body ? `\n\n${showBytes(this.wire.body)}` : '';
    return `\n# ${this.operationId} as ${this.caller}: ${this.tags.join('; ')}\n${head.join('\n')}${body}\n`;
  }

  [fc.toStringMethod](): string {
    return this.toString();
  }
}

function showBytes(b: Buffer): string {
  const text = b.toString('latin1');
  const printable = /^[\x20-\x7e\r\n\t]*$/.test(text);
  const shown = printable ? text : JSON.stringify(b.toString('utf8'));
  const cut = shown.length > 1200 ? `${shown.slice(0, 1200)}… (${b.length} bytes)` : shown;
  return printable ? cut : `(utf-8, JSON-escaped) ${cut}`;
}

/** Every operation's requests. */
export function requestArbitrary(models: OpModel[], world: World): fc.Arbitrary<FuzzRequest> {
  // Operations that take a narrow get more: it is the richest input the server interprets itself.
  return fc.oneof(
    ...models.map((m) => ({ arbitrary: operationArbitrary(m, world), weight: m.params.some((f) => f.name === 'narrow') ? 3 : 1 })),
  );
}

export function operationArbitrary(model: OpModel, world: World): fc.Arbitrary<FuzzRequest> {
  const certain = certainMutations(model, world);
  const extra = fc.oneof({ arbitrary: certain, weight: 1 }, { arbitrary: neutralMutations(model, world), weight: 2 });
  const optional = model.params.filter((f) => !f.required).map((f) => f.name);
  const valueArbs = Object.fromEntries(model.params.map((f) => [f.name, baseValue(model, f, world)]));
  const pathArbs = Object.fromEntries(model.path.map((f) => [f.name, baseValue(model, f, world).map((v) => String(v))]));
  return fc
    .record({
      caller: fc.constantFrom(...CALLERS),
      layout: fc.constantFrom<Layout>('form', 'multipart', 'query', 'split'),
      optional: fc.subarray(optional, { maxLength: Math.min(3, optional.length) }),
      values: fc.record(valueArbs),
      path: fc.record(pathArbs),
      primary: certain,
      extras: fc.array(extra, { maxLength: 2 }),
      splitBits: fc.nat(),
    })
    .map((plan) => {
      const present = new Set([...model.params.filter((f) => f.required).map((f) => f.name), ...plan.optional]);
      const d: Draft = {
        model,
        world,
        method: model.method,
        caller: plan.caller,
        values: new Map(Object.entries(plan.values).filter(([k]) => present.has(k))),
        texts: new Map(),
        path: new Map(Object.entries(plan.path)),
        extras: [],
        layout: model.method === 'GET' ? 'query' : plan.layout,
        layoutLocked: false,
        splitBits: plan.splitBits,
        auth: null,
        body: [],
        tags: [],
        touched: new Set(),
      };
      if (!plan.primary.apply(d)) throw new Error(`fuzz: primary mutation ${plan.primary.tag} did not apply to ${model.id}`);
      d.tags.push(plan.primary.tag);
      for (const m of plan.extras) if (m.apply(d)) d.tags.push(m.tag);
      return new FuzzRequest(model.id, d.caller, d.tags, serialize(d));
    });
}

function baseValue(model: OpModel, f: Field, world: World): fc.Arbitrary<unknown> {
  const pool = BASE_VALUES[model.id]?.[f.name] ?? BASE_VALUES['*']![f.name];
  if (pool && !f.schema.enum) return pool(world);
  return validValue(f.schema);
}

// ---------------------------------------------------------------------------
// Certain mutations: after any of these, 4xx is the only right answer.

function certainMutations(model: OpModel, w: World): fc.Arbitrary<Mutation> {
  const groups: Array<{ arbitrary: fc.Arbitrary<Mutation>; weight: number }> = [];
  // One list per field, so that each field is as likely as another however many ways it can break.
  const schemaLevel: Array<fc.Arbitrary<Mutation>> = [];
  const serverLevel: Array<{ arbitrary: fc.Arbitrary<Mutation>; weight: number }> = [];
  const add = (arbitrary: fc.Arbitrary<Mutation>, weight = 1) => serverLevel.push({ arbitrary, weight });
  for (const f of model.params) {
    const ways: Array<fc.Arbitrary<Mutation>> = [];
    if (f.required) ways.push(fc.constant(setParam(`missing ${f.name}`, f.name, undefined)));
    const bad = invalidValue(f.schema, f.decoding);
    if (bad) ways.push(bad.map((b) => setParam(`${f.name} ${b.why}: ${short(b.value)}`, f.name, b.value)));
    if (f.decoding === 'json' || f.decoding === 'query-json') {
      ways.push(unparsableJson.map((text) => setText(`${f.name} not JSON: ${short(text)}`, f.name, text)));
    }
    if (
      f.schema.type === 'integer' &&
      f.schema.maximum === undefined &&
      !f.schema.enum &&
      f.decoding !== 'raw' &&
      !(HUGE_ACCEPTED[model.id] ?? []).includes(f.name)
    ) {
      // No value beyond 2^53 can be honoured exactly (and none fits a SQL integer column).
      ways.push(fc.constantFrom(...HUGE_INTEGERS).map((h) => setParam(`${f.name} huge: ${short(h)}`, f.name, new Raw(h))));
    }
    if (ways.length) schemaLevel.push(fc.oneof(...ways));
    const refused = REFUSED_TEXT[model.id]?.[f.name];
    if (refused) add(refused.map((v) => setParam(`${f.name} refused by the server: ${short(v)}`, f.name, v)));
    // A narrow is the richest input the server interprets itself.
    if (f.name === 'narrow') add(badNarrow(model, w, model.id === 'register-queue' ? badEventTerms() : badMessageTerms(w)), 12);
  }
  for (const r of REFERENCES[model.id] ?? []) add(referenceMutation(model, w, r));
  for (const combination of REFUSED_COMBINATIONS[model.id] ?? []) add(combination(w).map((values) => setAll(model, values)));
  if (ADMINISTRATORS_ONLY.includes(model.id)) {
    add(
      fc.constantFrom<Caller>('moderator', 'member', 'guest', 'bot').map((caller) => ({
        tag: `as the ${caller}, not an administrator`,
        apply(d: Draft) {
          d.caller = caller;
          return true;
        },
      })),
    );
  }
  // The validator refuses the schema-level ones; the server-level ones reach the handlers.
  if (schemaLevel.length) groups.push({ arbitrary: fc.oneof(...schemaLevel), weight: 4 });
  if (serverLevel.length) groups.push({ arbitrary: fc.oneof(...serverLevel), weight: 6 });
  const path = model.path.map((p) => pathMutation(model, p, w));
  if (path.length) groups.push({ arbitrary: fc.oneof(...path), weight: 2 });
  if (model.authenticated) groups.push({ arbitrary: authMutation, weight: 1 });
  groups.push({ arbitrary: methodMutation(model), weight: 1 });
  groups.push({ arbitrary: certainBodyMutation, weight: 2 });
  return fc.oneof(...groups);
}

const short = (v: unknown) => {
  const s = typeof v === 'string' ? JSON.stringify(v) : toJsonText(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

function setParam(tag: string, name: string, value: unknown, also: Record<string, unknown> = {}): Mutation {
  return {
    tag,
    apply(d) {
      for (const [k, v] of Object.entries(also)) if (!d.touched.has(k)) d.values.set(k, v);
      d.texts.delete(name);
      if (value === undefined) d.values.delete(name);
      else d.values.set(name, value);
      // A duplicate of this parameter could now carry a valid value: drop them.
      d.extras = d.extras.filter((e) => e.name !== name);
      d.touched.add(name);
      for (const k of Object.keys(also)) d.touched.add(k);
      return true;
    },
  };
}

/** Several parameters (path ones too) at once; undefined removes one. */
function setAll(model: OpModel, values: Record<string, unknown>): Mutation {
  const shown = Object.entries(values)
    .map(([k, v]) => (v === undefined ? `no ${k}` : `${k}=${short(v)}`))
    .join(', ');
  return {
    tag: `refused together: ${shown}`,
    apply(d) {
      for (const [k, v] of Object.entries(values)) {
        if (model.path.some((p) => p.name === k)) {
          d.path.set(k, String(v));
          d.touched.add(`path:${k}`);
          continue;
        }
        d.texts.delete(k);
        if (v === undefined) d.values.delete(k);
        else d.values.set(k, v);
        d.extras = d.extras.filter((e) => e.name !== k);
        d.touched.add(k);
      }
      return true;
    },
  };
}

function setText(tag: string, name: string, text: string): Mutation {
  return {
    tag,
    apply(d) {
      d.values.delete(name);
      d.texts.set(name, text);
      d.extras = d.extras.filter((e) => e.name !== name);
      d.touched.add(name);
      return true;
    },
  };
}

/** Text JSON.parse refuses (the server's "is not valid JSON"). */
const unparsableJson = fc.oneof(
  fc.constantFrom('[{', '{"a":', 'tru', "'x'", 'NaN', '0x1F', '[1,]', '{a:1}', '"open', '01', '1.', '+1', '"\\x"', '', '[1]]', '\u0000'),
  oddString.filter((s) => !parsesAsJson(s)),
);

function referenceMutation(model: OpModel, w: World, r: Reference): fc.Arbitrary<Mutation> {
  const isPath = model.path.some((p) => p.name === r.field);
  const label = (v: unknown, huge: boolean) => `${r.field} names nothing${huge ? ' (huge)' : ''}: ${short(v)}`;
  // Lists: existing items with the missing one somewhere among them (nothing may be half done).
  const field = model.params.find((f) => f.name === r.field);
  const existing = field ? baseValue(model, field, w).map((v) => (Array.isArray(v) ? v : [])) : fc.constant([]);
  const among = <T>(missing: fc.Arbitrary<T>) =>
    fc.tuple(existing, missing, fc.nat()).map(([list, m, at]) => {
      const out: unknown[] = [...list];
      out.splice(at % (out.length + 1), 0, m);
      return { list: out, missing: m };
    });
  if (r.kind === 'text' || r.kind === 'text-list') {
    const text = nameLike.filter(
      (s) => s !== w.queueId && s !== w.inviteKey && !w.channelNames.includes(s.trim().toLowerCase()) && s.trim() !== '',
    );
    if (r.kind === 'text-list') return among(text).map(({ list, missing }) => setParam(label(missing, false), r.field, list, r.with));
    return text.map((s) => (isPath ? setPath(label(s, false), r.field, s) : setParam(label(s, false), r.field, s, r.with)));
  }
  if (r.kind === 'dm') {
    return nameLike.filter((s) => s.split(',').some((x) => x.trim() !== '')).map((s) => setParam(label(s, false), r.field, s, r.with));
  }
  if (r.kind === 'integer-list') {
    const single = among(missingIds(w)).map(({ list, missing }) =>
      setParam(
        label(missing.value, missing.huge),
        r.field,
        list.map((x) => (x === missing ? missing.value : x)),
        r.with,
      ),
    );
    // A long list (past SQLite's 32766 bound parameters), none of which exists.
    const long = fc.constantFrom(1_000, 40_000).map((n) =>
      setParam(
        `${r.field} names nothing (a list of ${n})`,
        r.field,
        Array.from({ length: n }, (_v, i) => w.missingId + i),
        r.with,
      ),
    );
    return fc.oneof({ arbitrary: single, weight: 4 }, { arbitrary: long, weight: 1 });
  }
  return missingIds(w).map(({ value, huge }) =>
    isPath
      ? setPath(label(value, huge), r.field, value instanceof Raw ? value : new Raw(String(value)))
      : setParam(label(value, huge), r.field, value, r.with),
  );
}

function setPath(tag: string, name: string, value: string | Raw): Mutation {
  return {
    tag,
    apply(d) {
      d.path.set(name, value);
      d.touched.add(`path:${name}`);
      return true;
    },
  };
}

const MALFORMED_ESCAPES = ['%FF', '%', '%E2%82', '%zz', '%C0%AF', '%ED%A0%80', '1%', '%%32'] as const;

function pathMutation(model: OpModel, p: Field, w: World): fc.Arbitrary<Mutation> {
  const pending = (PENDING_OPERATIONS as readonly string[]).includes(model.id);
  const isReference = pending || (REFERENCES[model.id] ?? []).some((r) => r.field === p.name);
  const options: Array<fc.Arbitrary<Mutation>> = [
    fc.constantFrom(...MALFORMED_ESCAPES).map((e) => setPath(`path ${p.name} malformed escape: ${e}`, p.name, new Raw(e))),
  ];
  if (p.schema.type === 'integer') {
    options.push(
      fc
        .oneof(fc.constantFrom('abc', '1.5', '-', 'null', '[1]', 'one'), oddString)
        .filter((s) => (s.trim() === '' ? s !== '' : Number.isNaN(Number(s))))
        .map((s) => setPath(`path ${p.name} not an integer: ${short(s)}`, p.name, s)),
    );
    if (isReference) {
      options.push(
        fc
          .constantFrom(...HUGE_INTEGERS)
          .map((h) => setPath(`path ${p.name} names nothing (huge): ${h.length} digits`, p.name, new Raw(h))),
      );
      options.push(
        fc
          .constantFrom(String(w.missingId), '0', '-1', '00', '-0')
          .map((s) => setPath(`path ${p.name} names nothing: ${s}`, p.name, new Raw(s))),
      );
    }
  } else if (isReference) {
    options.push(
      nameLike.filter((s) => s !== w.inviteKey && s !== '').map((s) => setPath(`path ${p.name} names nothing: ${short(s)}`, p.name, s)),
    );
  }
  return fc.oneof(...options);
}

function badNarrow(model: OpModel, w: World, bad: fc.Arbitrary<BadTerm>): fc.Arbitrary<Mutation> {
  const events = model.id === 'register-queue';
  const others = events ? fc.constant([]) : fc.array(harmlessTerms(w), { maxLength: 2 });
  // Many terms before the bad one (each may cost the server a lookup).
  const many = fc.tuple(harmlessTerms(w), fc.constantFrom(500, 3000)).map(([t, n]) => Array.from({ length: n }, () => t));
  return fc
    .tuple(bad, fc.oneof({ arbitrary: others, weight: 9 }, { arbitrary: events ? others : many, weight: 1 }), fc.nat())
    .map(([b, rest, at]) => {
      const narrow: unknown[] = [...rest];
      narrow.splice(rest.length > 2 ? rest.length : at % (narrow.length + 1), 0, b.term);
      const what = rest.length > 2 ? ` after ${rest.length} other terms` : '';
      const tag = b.prototype
        ? `narrow with a prototype name (${b.why})${what}: ${short(b.term)}`
        : `narrow ${b.why}${what}: ${short(b.term)}`;
      return setParam(tag, 'narrow', narrow);
    });
}

const authMutation: fc.Arbitrary<Mutation> = fc
  .constantFrom<AuthKind>('none', 'wrong key', 'short key', 'no colon', 'bearer', 'deactivated', 'garbage', "another's address")
  .map((kind) => ({
    tag: `credentials: ${kind}`,
    apply(d: Draft) {
      d.auth = kind;
      return true;
    },
  }));

const ALL_METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'];

function methodMutation(model: OpModel): fc.Arbitrary<Mutation> {
  const others = ALL_METHODS.filter((x) => !model.pathMethods.includes(x) && !(x === 'HEAD' && model.pathMethods.includes('GET')));
  return fc.constantFrom(...others).map((method) => ({
    tag: `method ${method}, which the path does not have`,
    apply(d: Draft) {
      d.method = method;
      return true;
    },
  }));
}

// ---------------------------------------------------------------------------
// Body-level mutations: broken encodings and multipart.

function bodyMutation(tag: string, layout: 'form' | 'multipart', transform: BodyMutation['transform'], first = false): Mutation {
  return {
    tag,
    apply(d) {
      if (d.layoutLocked && d.layout !== layout) return false;
      // Everything goes in the body so that the malformed part is what the server must read.
      d.layout = layout;
      d.layoutLocked = true;
      if (first) d.body.unshift({ layout, transform });
      else d.body.push({ layout, transform });
      return true;
    },
  };
}

/** Compressed with a Content-Encoding the server decodes: then cut short, or replaced by bytes that are no such stream. */
const brokenCompression = fc
  .tuple(
    fc.constantFrom('gzip', 'deflate', 'br'),
    fc.constantFrom('truncated', 'garbage'),
    fc.uint8Array({ minLength: 1, maxLength: 48 }),
    fc.nat(),
  )
  .map(([encoding, how, noise, cut]) =>
    bodyMutation(
      `Content-Encoding ${encoding}, ${how}`,
      'form',
      (b) => {
        const plain = b.bytes && b.bytes.length ? b.bytes : Buffer.from('a=1');
        let bytes: Buffer;
        if (how === 'truncated') {
          const full =
            encoding === 'gzip' ? zlib.gzipSync(plain) : encoding === 'deflate' ? zlib.deflateSync(plain) : zlib.brotliCompressSync(plain);
          bytes = full.subarray(0, 1 + (cut % (full.length - 1)));
        } else {
          // A first byte no gzip (1f), zlib (x8) or brotli stream of this body starts with, then noise.
          bytes = Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.from(noise)]);
        }
        return { ...b, bytes, headers: { ...b.headers, 'Content-Encoding': encoding } };
      },
      true,
    ),
  );

const certainBodyMutation: fc.Arbitrary<Mutation> = fc.oneof(
  brokenCompression,
  fc.constantFrom('compress', 'x-fuzz', 'gzip, x-fuzz').map((enc) =>
    bodyMutation(`Content-Encoding ${enc} (unsupported)`, 'form', (b) => ({
      ...b,
      bytes: b.bytes?.length ? b.bytes : Buffer.from('a=1'),
      headers: { ...b.headers, 'Content-Encoding': enc },
    })),
  ),
  fc.constantFrom('koi8-r', 'utf-16', 'x-fuzz', 'utf-7', 'ebcdic-cp-us').map((cs) =>
    bodyMutation(`charset ${cs} (unsupported)`, 'form', (b) => ({
      ...b,
      bytes: b.bytes?.length ? b.bytes : Buffer.from('a=1'),
      contentType: `application/x-www-form-urlencoded; charset=${cs}`,
    })),
  ),
  fc.constantFrom('form', 'multipart').map((layout) =>
    bodyMutation(`more than 1000 ${layout} parameters`, layout as 'form' | 'multipart', (b) => {
      const names = Array.from({ length: 1001 }, (_v, i) => `p${i}`);
      if (layout === 'form') {
        const more = names.map((n) => `${n}=1`).join('&');
        return { ...b, bytes: Buffer.from(b.bytes?.length ? `${b.bytes.toString('latin1')}&${more}` : more, 'latin1') };
      }
      return {
        ...b,
        bytes: Buffer.concat([Buffer.from(names.map((n) => partText(n, '1')).join('')), b.bytes ?? Buffer.from(`--${BOUNDARY}--\r\n`)]),
      };
    }),
  ),
  fc.constant(bodyMutation('multipart without a boundary', 'multipart', (b) => ({ ...b, contentType: 'multipart/form-data' }))),
  fc
    .constantFrom('; boundary=""', '; boundary=other-boundary')
    .map((param) => bodyMutation(`multipart boundary${param}`, 'multipart', (b) => ({ ...b, contentType: `multipart/form-data${param}` }))),
  fc.nat().map((cut) =>
    bodyMutation('multipart truncated', 'multipart', (b) => {
      const bytes = b.bytes ?? Buffer.alloc(0);
      const end = bytes.lastIndexOf(`--${BOUNDARY}--`);
      const keep = end <= 0 ? 0 : cut % end;
      // The leading CRLF keeps a cut just after `--boundary` from joining the new
      // part's `--boundary` into a close delimiter (which would end the body validly).
      return {
        ...b,
        bytes: Buffer.concat([
          bytes.subarray(0, keep),
          Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx`),
        ]),
      };
    }),
  ),
  fc.constant(
    bodyMutation('multipart part header over 80 kB', 'multipart', (b) => ({
      ...b,
      bytes: Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\nX-Pad: ${'p'.repeat(90_000)}\r\n\r\nx\r\n`),
        b.bytes ?? Buffer.alloc(0),
      ]),
    })),
  ),
);

// ---------------------------------------------------------------------------
// Neutral mutations: never make an invalid request valid.

function neutralMutations(model: OpModel, w: World): fc.Arbitrary<Mutation> {
  const declared = new Set([...model.params.map((f) => f.name)]);
  const options: Array<{ arbitrary: fc.Arbitrary<Mutation>; weight: number }> = [];
  options.push({
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS, 'bogus', 'a[b]', 'narrow[0]'), oddString).filter((n) => !declared.has(n) && n !== ''),
        oddString,
        fc.constantFrom<'query' | 'body'>('query', 'body'),
      )
      .map(([name, value, where]) => ({
        tag: `undeclared parameter ${short(name)}`,
        apply(d: Draft) {
          d.extras.push({ name, text: value, where });
          return true;
        },
      })),
  });
  options.push({
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'a part without a name',
        'NUL in a field name',
        'a header line without a colon',
        'a part with a filename',
        'an unknown part header',
      )
      .map((quirk) =>
        bodyMutation(`multipart with ${quirk}`, 'multipart', (b) => ({
          ...b,
          bytes: Buffer.concat([Buffer.from(quirkPart(quirk)), b.bytes ?? Buffer.alloc(0)]),
        })),
      ),
  });
  if (model.params.length) {
    const dupArbs = model.params.map((f) =>
      fc.tuple(fc.constant(f), baseValue(model, f, w), fc.constantFrom<'query' | 'body' | 'first'>('query', 'body', 'first')),
    );
    options.push({
      weight: 2,
      arbitrary: fc.oneof(...dupArbs).map(([f, other, where]) => ({
        tag: `${f.name} twice (${where === 'first' ? 'an earlier occurrence' : `again in the ${where}`})`,
        apply(d: Draft) {
          if (d.touched.has(f.name) || !d.values.has(f.name)) return false;
          // Either occurrence is valid, so whichever the server keeps, the request stays as invalid as it was.
          d.extras.push({ name: f.name, text: encodeValue(f, other), where });
          return true;
        },
      })),
    });
  }
  return fc.oneof(...options);
}

function quirkPart(quirk: string): string {
  switch (quirk) {
    case 'a part without a name':
      return `--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n`;
    case 'NUL in a field name':
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="bo\u0000gus"\r\n\r\nx\r\n`;
    case 'a header line without a colon':
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="bogus"\r\nno colon here\r\n\r\nx\r\n`;
    case 'a part with a filename':
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="bogus"; filename="x.txt"\r\nContent-Type: text/plain\r\n\r\nx\r\n`;
    default:
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="bogus"\r\nX-Fuzz: \u202e😀\r\n\r\nx\r\n`;
  }
}

// ---------------------------------------------------------------------------
// Serialization.

const BOUNDARY = 'fuzzBoundary7MA4YWxkTrZu0gW';

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD), keeping RFC 3986 unreserved characters. */
export function pct(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function encodeValue(f: Field, v: unknown): string {
  if (v instanceof Raw) return v.text;
  switch (f.decoding) {
    case 'raw':
    case 'path':
      return typeof v === 'string' ? v : toJsonText(v);
    case 'query':
      return typeof v === 'string' ? v : toJsonText(v);
    default:
      return toJsonText(v);
  }
}

const partText = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name.replace(/"/g, '%22')}"\r\n\r\n${value}\r\n`;

function serialize(d: Draft): WireRequest {
  const m = d.model;
  const pathText = m.template.replace(/\{([^}]+)\}/g, (_x, name: string) => {
    const v = d.path.get(name) ?? '1';
    return v instanceof Raw ? v.text : pct(v);
  });
  const query: Array<[string, string]> = [];
  const body: Array<[string, string]> = [];
  let i = 0;
  for (const f of m.params) {
    const text = d.texts.get(f.name) ?? (d.values.has(f.name) ? encodeValue(f, d.values.get(f.name)) : undefined);
    if (text === undefined) continue;
    const inQuery = f.in === 'query' || d.layout === 'query' || (d.layout === 'split' && (d.splitBits >> (i++ % 30)) % 2 === 1);
    (inQuery ? query : body).push([f.name, text]);
  }
  for (const e of d.extras) {
    if (e.where === 'query' || d.layout === 'query' || m.method === 'GET') query.push([e.name, e.text]);
    else if (e.where === 'first') body.unshift([e.name, e.text]);
    else body.push([e.name, e.text]);
  }
  const qs = query.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
  let b: SerializedBody = { contentType: null, bytes: null, headers: {} };
  const bodyLayout = d.body[0]?.layout ?? (d.layout === 'multipart' ? 'multipart' : 'form');
  if (body.length || d.body.length) {
    if (bodyLayout === 'multipart') {
      b = {
        contentType: `multipart/form-data; boundary=${BOUNDARY}`,
        bytes: Buffer.from(body.map(([k, v]) => partText(k, v)).join('') + `--${BOUNDARY}--\r\n`),
        headers: {},
      };
    } else {
      b = {
        contentType: 'application/x-www-form-urlencoded',
        bytes: Buffer.from(body.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')),
        headers: {},
      };
    }
  }
  for (const t of d.body) b = t.transform(b);
  const headers: Record<string, string> = { ...b.headers };
  if (b.contentType) headers['Content-Type'] = b.contentType;
  const auth = authorization(d);
  if (auth) headers.Authorization = auth;
  return { method: d.method, target: `/api/v1${pathText}${qs ? `?${qs}` : ''}`, headers, body: b.bytes };
}

function authorization(d: Draft): string | null {
  if (!d.model.authenticated && d.auth === null) return null;
  const user = d.world.users[d.caller];
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
  switch (d.auth) {
    case null:
      return basic(`${user.email}:${user.api_key}`);
    case 'none':
      return null;
    case 'wrong key':
      return basic(`${user.email}:${'z'.repeat(32)}`);
    case 'short key':
      return basic(`${user.email}:${user.api_key.slice(0, 10)}`);
    case 'no colon':
      return basic(`${user.email}${user.api_key}`);
    case 'bearer':
      return `Bearer ${user.api_key}`;
    case 'deactivated':
      return basic(`${d.world.users.deactivated.email}:${d.world.users.deactivated.api_key}`);
    case 'garbage':
      return 'Basic !!!%%%';
    case "another's address":
      return basic(`${(d.caller === 'owner' ? d.world.users.admin : d.world.users.owner).email}:${user.api_key}`);
  }
}
