import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

/**
 * The server's signing secret: SECRET_KEY when set, else 32 random bytes kept
 * in DATA_DIR/secret_key. The first process creates the file (exclusively,
 * so that processes starting together agree on one), the others read it;
 * a URL signed by one process is then good on all. Without a usable data
 * directory (tests), a secret for this process alone.
 */
export function serverSecret(config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer {
  if (config.secretKey) return Buffer.from(config.secretKey, 'utf8');
  const file = path.join(config.dataDir, 'secret_key');
  try {
    return readSecret(file);
  } catch {
    // not there yet, or no data directory
  }
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    // Written whole under a private name, then linked into place: link fails
    // when the file exists, and no reader ever sees it half written.
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(temp, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
    try {
      fs.linkSync(temp, file);
    } finally {
      fs.rmSync(temp, { force: true });
    }
  } catch {
    // another process won the race (read its secret below), or nowhere to write
  }
  try {
    return readSecret(file);
  } catch {
    return randomBytes(32);
  }
}

function readSecret(file: string): Buffer {
  const text = fs.readFileSync(file, 'utf8').trim();
  if (text.length < 32) throw new Error('secret_key is too short');
  return Buffer.from(text, 'utf8');
}
