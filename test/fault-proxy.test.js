'use strict';
// test/lib/fault-proxy.js alone, in front of an echo server on loopback: bytes pass unchanged,
// added latency delays the round trip by at least twice the latency (once each way), a reset is
// seen by the client as ECONNRESET, a blackhole passes nothing (not even to a connection made
// during it) and everything sent meanwhile arrives once it is restored, a stall holds only the
// connections it picked, a bandwidth limit spreads a transfer over at least size / rate.
// Lower bounds only: a loaded machine makes everything slower, never faster.

const t = require('tap');
const net = require('node:net');
const { once } = require('node:events');
const { FaultProxy, routesFromEnv } = require('./lib/fault-proxy');

async function echoServer() {
  const server = net.createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function setup(t) {
  const server = await echoServer();
  const proxy = await FaultProxy.start([{ listen: 0, target: { host: '127.0.0.1', port: server.address().port } }]);
  t.teardown(async () => {
    await proxy.close();
    server.close();
  });
  return proxy;
}

/** A client through the proxy collecting what it receives. */
async function client(proxy) {
  const socket = net.connect(proxy.ports()[0], '127.0.0.1');
  await once(socket, 'connect');
  const c = { socket, received: Buffer.alloc(0), error: null, closed: false };
  socket.on('data', (d) => { c.received = Buffer.concat([c.received, d]); });
  socket.on('error', (err) => { c.error = err; });
  socket.on('close', () => { c.closed = true; });
  c.until = async (n, timeoutMs = 10000) => {
    const deadline = Date.now() + timeoutMs;
    while (c.received.length < n && Date.now() < deadline && !c.closed) await new Promise((r) => setTimeout(r, 5));
    return c.received.length >= n;
  };
  return c;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

t.test('bytes pass unchanged, both ways', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  const data = Buffer.from(Array.from({ length: 100000 }, (_, i) => (i * 7919) % 251));
  c.socket.write(data);
  t.ok(await c.until(data.length), 'all echoed');
  t.ok(c.received.equals(data), 'byte for byte');
  t.equal(proxy.connections().length, 1, 'one connection');
  t.equal(proxy.connections()[0].bytesUp, data.length, 'bytes up counted');
  c.socket.destroy();
});

t.test('added latency delays the round trip by at least twice the latency', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  proxy.set({ latencyMs: 150 });
  const sent = Date.now();
  c.socket.write('ping');
  t.ok(await c.until(4), 'echoed');
  const rtt = Date.now() - sent;
  t.ok(rtt >= 300 - 2, `round trip ${rtt} ms >= 300 ms`);
  t.equal(c.received.toString(), 'ping');
  proxy.set({ latencyMs: 0 });
  await proxy.spike(0, 1); // a spike that ends leaves nothing behind
  c.socket.destroy();
});

t.test('a latency spike applies only while it lasts', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  const ended = proxy.spike(200, 300);
  const sent = Date.now();
  c.socket.write('a');
  t.ok(await c.until(1), 'echoed during the spike');
  t.ok(Date.now() - sent >= 400 - 2, `round trip during the spike ${Date.now() - sent} ms >= 400 ms`);
  await ended;
  t.ok(await c.until(1), 'connection still open');
  t.notOk(c.closed, 'not closed by the spike');
  c.socket.destroy();
});

t.test('a reset is seen by the client as ECONNRESET', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  c.socket.write('x');
  t.ok(await c.until(1), 'connected through');
  t.equal(proxy.reset(), 1, 'one connection reset');
  for (let i = 0; i < 200 && !c.closed; i++) await sleep(10);
  t.ok(c.closed, 'client socket closed');
  t.equal(c.error && c.error.code, 'ECONNRESET', 'with ECONNRESET');
  t.equal(proxy.stats()[0].resets, 1, 'counted');
  const again = await client(proxy);
  again.socket.write('y');
  t.ok(await again.until(1), 'a new connection works');
  again.socket.destroy();
});

t.test('blackhole: nothing passes, then everything sent meanwhile arrives', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  c.socket.write('before');
  t.ok(await c.until(6), 'passes before');
  const restored = proxy.blackhole(0, 600);
  c.socket.write('during');
  const fresh = await client(proxy); // accepted during the blackhole
  fresh.socket.write('new');
  await sleep(400);
  t.equal(c.received.toString(), 'before', 'nothing passed on the open connection');
  t.equal(fresh.received.length, 0, 'nothing passed on a connection made during it');
  t.notOk(c.closed || fresh.closed, 'connections kept open');
  await restored;
  t.ok(await c.until(12), 'what was sent during it arrives after it');
  t.equal(c.received.toString(), 'beforeduring', 'in order, complete');
  t.ok(await fresh.until(3), 'the new connection reaches the server after it');
  t.equal(fresh.received.toString(), 'new');
  c.socket.destroy();
  fresh.socket.destroy();
});

t.test('a restore whose timer fires early still restores, once the hold has ended', async (t) => {
  const proxy = await setup(t);
  const later = proxy.later.bind(proxy);
  proxy.later = (fn, ms) => later(fn, Math.max(0, ms - 40)); // a loop's cached time, exaggerated
  const c = await client(proxy);
  c.socket.write('before');
  t.ok(await c.until(6), 'passes before');
  const restored = proxy.blackhole(0, 300);
  const stalled = proxy.stall(() => true, 200);
  c.socket.write('during');
  const at = Date.now();
  await Promise.all([restored, stalled]);
  t.equal(c.received.toString(), 'before', 'nothing passed before the early timers fired');
  t.ok(await c.until(12, 5000), 'what was sent during it arrives, well before any client timeout');
  t.ok(Date.now() - at >= 290, `not before the blackhole ended (${Date.now() - at} ms)`);
  t.equal(c.received.toString(), 'beforeduring', 'in order, complete');
  c.socket.destroy();
});

t.test('stall holds only the chosen connections', async (t) => {
  const proxy = await setup(t);
  const a = await client(proxy);
  const b = await client(proxy);
  a.socket.write('1');
  b.socket.write('1');
  t.ok(await a.until(1) && await b.until(1), 'both pass');
  const stalledId = proxy.connections()[0].id;
  const done = proxy.stall((conn) => conn.id === stalledId, 500);
  a.socket.write('2');
  b.socket.write('2');
  t.ok(await b.until(2, 300), 'the other connection passes during the stall');
  t.equal(a.received.toString(), '1', 'the stalled one does not');
  t.equal(await done, 1, 'one connection stalled');
  t.ok(await a.until(2), 'and passes after it');
  a.socket.destroy();
  b.socket.destroy();
});

t.test('bandwidth limit: a transfer takes at least size / rate', async (t) => {
  const proxy = await setup(t);
  const c = await client(proxy);
  proxy.set({ bandwidth: 200000 }); // bytes/s, each direction
  const data = Buffer.alloc(100000, 1);
  const sent = Date.now();
  c.socket.write(data);
  t.ok(await c.until(data.length), 'all echoed');
  t.ok(Date.now() - sent >= 500 - 2, `100 kB at 200 kB/s took ${Date.now() - sent} ms >= 500 ms`);
  c.socket.destroy();
});

t.test('KAFKA_PROXY routes', async (t) => {
  t.same(routesFromEnv('29392>127.0.0.1:29292,29393>127.0.0.1:29293'), [
    { listen: 29392, target: { host: '127.0.0.1', port: 29292 } },
    { listen: 29393, target: { host: '127.0.0.1', port: 29293 } },
  ]);
  t.equal(routesFromEnv(''), null);
  t.throws(() => routesFromEnv('29392=127.0.0.1'), /not listenPort>host:port/);
});
