import fs from 'node:fs';
import path from 'node:path';

/** A zuliprc as Zulip's clients and libraries read it: INI with an [api] section. */
export function zuliprcText(email: string, apiKey: string, site: string): string {
  return `[api]\nemail=${email}\nkey=${apiKey}\nsite=${site}\n`;
}

/** Writes a zuliprc readable only by its owner (it holds an API key); returns its path. */
export function writeZuliprc(dir: string, name: string, email: string, apiKey: string, site: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.isAbsolute(name) ? name : path.join(dir, name);
  fs.writeFileSync(file, zuliprcText(email, apiKey, site), { mode: 0o600 });
  return file;
}

/** The fields of a zuliprc as zuliprcText writes it (the server names its own at start), for tools and tests. */
export function parseZuliprc(text: string): { email?: string; key?: string; site?: string } {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^(email|key|site)=(.*)$/.exec(line);
    if (m) fields[m[1]!] = m[2]!;
  }
  return fields;
}
