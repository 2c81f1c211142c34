import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nacl from 'tweetnacl';
import type { UserRow } from '../../src/queries/rows';
import type { ApiClient } from './server';

/**
 * A push relay for tests: an HTTP server on 127.0.0.1 speaking the relay's
 * two endpoints (src/actions/push-relay.ts). It records every request,
 * answers registrations with its own device ids, and answers each request
 * with the next status of `script` for that path (200 once the script is
 * used up). It holds no push keys: a test decrypts with the key its client
 * registered, as the phone would.
 */
export interface RelayRequest {
  path: string;
  status: number;
  body: Record<string, any>;
}

export class TestRelay {
  readonly requests: RelayRequest[] = [];
  /** Statuses to answer, per path, before answering 200. */
  readonly script = new Map<string, number[]>();
  /** The Zulip error code a refusal carries (a 4xx of `script`), per path; none by default. */
  readonly refusalCodes = new Map<string, string>();
  /** How long to hold each next answer, per path, in milliseconds (a slow relay). */
  readonly delays = new Map<string, number[]>();
  private nextDeviceId = 9000;
  private server: Server | null = null;
  url = '';

  static readonly REGISTER = '/api/v1/remotes/push/e2ee/register';
  static readonly NOTIFY = '/api/v1/remotes/push/e2ee/notify';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readJson(req).then(async (body) => {
        const path = req.url ?? '';
        const status = this.script.get(path)?.shift() ?? 200;
        this.requests.push({ path, status, body });
        const delay = this.delays.get(path)?.shift() ?? 0;
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        res.writeHead(status, { 'Content-Type': 'application/json' });
        const code = this.refusalCodes.get(path);
        if (status !== 200) return res.end(JSON.stringify({ result: 'error', msg: 'scripted failure', ...(code ? { code } : {}) }));
        if (path === TestRelay.REGISTER) return res.end(JSON.stringify({ result: 'success', msg: '', device_id: this.nextDeviceId++ }));
        res.end(JSON.stringify({ result: 'success', msg: '' }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Requests to a path (answered 200 or not). */
  to(path: string): RelayRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Notification requests the relay accepted. */
  delivered(): RelayRequest[] {
    return this.to(TestRelay.NOTIFY).filter((r) => r.status === 200);
  }
}

function readJson(req: IncomingMessage): Promise<Record<string, any>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>);
      } catch {
        resolve({});
      }
    });
  });
}

/** push_key as a client sends it: Base64 of 0x31 and a 32-byte key. */
export function pushKeyOf(seed: number): string {
  return Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, seed)]).toString('base64');
}

/** token_id as a client computes it: the first 8 bytes of the token's SHA-256, Base64. */
export function tokenIdOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest().subarray(0, 8).toString('base64');
}

/** Opens encrypted_data (nonce ‖ secret box) with a push_key, as the device does; null when it does not open. */
export function decryptWithPushKey(encryptedData: string, pushKey: string): Record<string, any> | null {
  const data = Buffer.from(encryptedData, 'base64');
  const key = Buffer.from(pushKey, 'base64').subarray(1);
  const opened = nacl.secretbox.open(data.subarray(nacl.secretbox.nonceLength), data.subarray(0, nacl.secretbox.nonceLength), key);
  return opened ? (JSON.parse(Buffer.from(opened).toString('utf8')) as Record<string, any>) : null;
}

/** Registers a device for the user (POST /register_client_device) and returns its id. */
export async function registerDevice(api: ApiClient, user: UserRow): Promise<number> {
  const res = await api.post('/register_client_device', user);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.device_id as number;
}

/** A complete first registration for a device. */
export function registration(deviceId: number, opts: { keySeed?: number; keyId?: number; token?: string; kind?: 'fcm' | 'apns' } = {}) {
  return {
    device_id: deviceId,
    push_key_id: opts.keyId ?? 1000 + deviceId,
    push_key: pushKeyOf(opts.keySeed ?? deviceId),
    token_kind: opts.kind ?? 'fcm',
    token_id: tokenIdOf(opts.token ?? `token-${deviceId}`),
    bouncer_public_key: Buffer.from('relay-public-key-1').toString('base64'),
    encrypted_push_registration: Buffer.from(`sealed registration of ${opts.token ?? `token-${deviceId}`}`).toString('base64'),
  };
}
