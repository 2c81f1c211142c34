import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The contract the server loads (openapi/, through swagger-parser, as
 * loadSpec does) must not make its names two-byte strings.
 *
 * V8 stores a string in one byte per character when it can, and in two
 * when its source held any character beyond Latin-1. The YAML parser slices
 * each property name out of its file's text, so one such character anywhere
 * in a file (a "…" in a description) made every name in that file two-byte.
 * Property names are interned once per process: `match_content` and
 * `match_subject`, first met in the contract, stayed two-byte for every
 * object that later used them, and a response holding one of them
 * serialised to a two-byte JSON text, which cost 171 µs more to measure and
 * encode for a 74 KB search page (measured). This runs in a fresh process,
 * since in this one the names may already be interned from test code.
 */
const ROOT = path.join(__dirname, '..');

const SCRIPT = `
const v8 = require('node:v8');
const SwaggerParser = require('@apidevtools/swagger-parser');
// v8.serialize writes 0xFF, the format version (a varint), maybe padding
// (0), then the tag: '"' (0x22) for a one-byte string, 'c' (0x63) for a
// two-byte one. Anything else means the format changed: fail, not pass.
const twoByte = (s) => {
  const b = v8.serialize(s);
  if (b[0] !== 0xff) throw new Error('unknown serialization header');
  let i = 1;
  while (b[i] & 0x80) i++;
  i++;
  while (b[i] === 0) i++;
  if (b[i] === 0x63) return true;
  if (b[i] === 0x22) return false;
  throw new Error('unknown string tag ' + b[i]);
};
// The detector itself, on strings of known representation.
if (!twoByte('\u2714abcdefghijklmnopqrstuvwxyz'.slice(1)) || twoByte('abc')) throw new Error('the two-byte detector is wrong');
(async () => {
  const doc = await SwaggerParser.validate('openapi/openapi.yaml');
  const found = new Set();
  const seen = new Set();
  const check = (s) => { if (/^[\\u0000-\\u00ff]*$/.test(s) && twoByte(s)) found.add(s.slice(0, 80)); };
  const walk = (n) => {
    if (typeof n === 'string') return check(n);
    if (!n || typeof n !== 'object' || seen.has(n)) return;
    seen.add(n);
    for (const [k, v] of Object.entries(n)) { check(k); walk(v); }
  };
  walk(doc);
  process.stdout.write(JSON.stringify({ objects: seen.size, twoByte: [...found].sort() }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('the loaded contract', () => {
  it('holds no Latin-1 name or text as a two-byte string', () => {
    const out = JSON.parse(execFileSync(process.execPath, ['-e', SCRIPT], { cwd: ROOT, encoding: 'utf8' })) as {
      objects: number;
      twoByte: string[];
    };
    // The walk reached the document (not an empty object).
    expect(out.objects).toBeGreaterThan(1000);
    expect(out.twoByte).toEqual([]);
  }, 60_000);
});
