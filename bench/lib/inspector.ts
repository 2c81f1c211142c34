import crypto from 'node:crypto';
import net from 'node:net';

/**
 * A minimal client of a Node process's inspector (the Chrome DevTools
 * protocol over a WebSocket), enough to call a method and read its result.
 * The soak uses it to force a full collection in the server before reading
 * its heap: a heap figure read at an arbitrary moment holds however much
 * garbage the last collection left, which moves by tens of percent between
 * two readings and would hide a leak or invent one. Node 20 has no
 * WebSocket client and no package here provides one; the protocol's part
 * needed (one connection, unfragmented text frames) is short.
 */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private buffered: Buffer = Buffer.alloc(0);

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('inspector connection closed'));
      this.pending.clear();
    });
  }

  /** Connects to `ws://host:port/<id>`, as the process printed it ("Debugger listening on …"). */
  static connect(wsUrl: string): Promise<Inspector> {
    const url = new URL(wsUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      const key = crypto.randomBytes(16).toString('base64');
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const status = head.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 101/.test(status)) return reject(new Error(`inspector refused the upgrade: ${status.split('\r\n')[0]}`));
        const inspector = new Inspector(socket);
        if (head.length > end + 4) inspector.read(head.subarray(end + 4));
        resolve(inspector);
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.once('connect', () =>
        socket.write(
          `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        ),
      );
    });
  }

  /** Calls a protocol method (e.g. `HeapProfiler.collectGarbage`) and resolves with its result. */
  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    const payload = Buffer.from(JSON.stringify({ id, method, params }));
    // A client's frames are masked (RFC 6455 §5.3): FIN + text, then the length, the mask, the bytes.
    const mask = crypto.randomBytes(4);
    const len = payload.length;
    const header =
      len < 126
        ? Buffer.from([0x81, 0x80 | len])
        : len < 65536
          ? Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff])
          : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), bigEndian64(len)]);
    for (let i = 0; i < len; i++) payload[i]! ^= mask[i % 4]!;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(Buffer.concat([header, mask, payload]));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  /** Server frames are unmasked; the inspector sends each message in one frame. */
  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const b = this.buffered;
      if (b.length < 2) return;
      let len = b[1]! & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        offset = 10;
      }
      if (b.length < offset + len) return;
      const opcode = b[0]! & 0x0f;
      const body = b.subarray(offset, offset + len);
      this.buffered = b.subarray(offset + len);
      if (opcode !== 0x1) continue; // only text frames carry protocol messages
      const message = JSON.parse(body.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) continue; // an event: none is enabled
      this.pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    }
  }
}

function bigEndian64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}
