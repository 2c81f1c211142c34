import nodemailer from 'nodemailer';
import net from 'node:net';
import { ContractChecker } from './support/contract';
import { ProcessClient, startServerProcess } from './support/server-process';
import { testSpec } from './support/server';
import { tempDataDir } from './support/uploads';

/** Whether something accepts connections on the port now. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('the email gateway in the server process', () => {
  const data = tempDataDir();
  afterAll(() => data.remove());

  it('listens when EMAIL_GATEWAY_PORT is set, posts mail to a channel address, and stops with the server', async () => {
    const server = await startServerProcess({
      DATA_DIR: data.dir,
      EMAIL_GATEWAY_PATTERN: '%s@gateway.test',
      EMAIL_GATEWAY_PORT: '0',
    });
    const client = new ProcessClient(server.url, new ContractChecker(await testSpec()));
    try {
      const port = Number(/^Email gateway: smtp:\/\/127\.0\.0\.1:(\d+) \(%s@gateway\.test\)$/m.exec(server.output())?.[1]);
      expect(port).toBeGreaterThan(0);
      const id = (await client.call('GET', '/get_stream_id', server.owner, { stream: 'general' })).body.stream_id as number;
      const { email } = (await client.call('GET', `/streams/${id}/email_address`, server.owner)).body;
      expect(email).toMatch(/^general\.[0-9a-f]{32}\.show-sender@gateway\.test$/);

      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
      await transport.sendMail({ from: 'ci@builds.test', to: email as string, subject: 'nightly', text: 'All green.' });
      transport.close();
      const narrow = JSON.stringify([{ operator: 'channel', operand: id }]);
      const res = await client.call('GET', '/messages', server.owner, { anchor: 'newest', num_before: 1, num_after: 0, narrow });
      expect(res.body.messages[0]).toMatchObject({ subject: 'nightly', sender_full_name: 'Email Gateway' });
      expect(res.body.messages[0].content).toContain('All green.');

      client.close();
      expect(await server.stop()).toBe(0);
      expect(await listening(port)).toBe(false);
    } finally {
      client.close();
      await server.kill();
    }
  });
});
