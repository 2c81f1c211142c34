'use strict';
/*
 * A stand-in push relay for the contract tests (contract-tests/run.sh starts
 * it and points PUSH_RELAY_URL at it), so POST /mobile_push/register can
 * succeed under dredd: it accepts every registration, naming each device,
 * and every notification. The encryption itself is tested by jest
 * (test/push-notifications.test.ts), whose relay decrypts what it receives.
 *   node contract-tests/push-relay.js <port>
 */
const http = require('node:http');

let nextDeviceId = 1;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const registered = req.url === '/api/v1/remotes/push/e2ee/register' ? { device_id: nextDeviceId++ } : {};
    res.end(JSON.stringify({ result: 'success', msg: '', ...registered }));
  });
});
server.listen(Number(process.argv[2]), '127.0.0.1');
