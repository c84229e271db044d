'use strict';
// A fault-injecting TCP proxy on loopback for the broker suite's fault scenarios
// (test/kafka/faults-*.test.js). Each route listens on a port and forwards every connection to
// one target (a Kafka broker's proxied listener, see scripts/kafka.sh KAFKA_PROXY_PORT); the
// tests change its behaviour while traffic flows:
//
//   const proxy = await FaultProxy.start([{ listen: 29392, target: { host: '127.0.0.1', port: 29292 } }, ...]);
//   proxy.set({ latencyMs: 20, bandwidth: 1 << 20 }, route?)   added latency (each direction),
//                                                                bandwidth limit (bytes/s per route and direction)
//   proxy.spike(ms, forMs, route?)    extra latency for a while (a latency spike), resolves when it ends
//   proxy.reset(route?, pick?)        connection resets: RST to the client, the upstream side closed;
//                                      pick(conn) chooses which (default all); returns how many
//   proxy.blackhole(route, forMs)     accept but pass nothing on that route for forMs (new connections
//                                      are accepted and held without an upstream), then restore;
//                                      bytes in flight are delivered after it, as TCP would
//   proxy.stall(pick, forMs)          the same for the connections pick(conn) chooses (one set);
//                                      picks get connections() entries
//   proxy.connections()               the open connections: { id, route, opened, bytesUp, bytesDown }
//   proxy.close()
//
// Routes are numbered from 0 in the order given. Only loopback is used. No dependency beyond node:net.

const net = require('node:net');

const HIGH_WATER = 1 << 20; // queued bytes per direction before the source is paused

/** One direction of a connection: chunks queued with the time they are due. */
class Pipe {
  constructor(conn, link, from, to, up) {
    this.conn = conn;
    this.link = link; // { nextFree } shared by the route's pipes of this direction
    this.from = from;
    this.to = to;
    this.up = up;
    this.queue = [];
    this.queued = 0;
    this.lastDue = 0;
    this.timer = null;
    from.on('data', (chunk) => this.push(chunk));
  }

  push(chunk) {
    const route = this.conn.route;
    const now = Date.now();
    let due = now + route.latencyMs + (now < route.spikeUntil ? route.spikeMs : 0);
    if (route.bandwidth > 0) {
      due = Math.max(due, this.link.nextFree);
      this.link.nextFree = due + (chunk.length * 1000) / route.bandwidth;
      due = this.link.nextFree;
    }
    due = Math.max(due, this.lastDue);
    this.lastDue = due;
    this.queue.push({ chunk, due });
    this.queued += chunk.length;
    if (this.up) this.conn.bytesUp += chunk.length;
    else this.conn.bytesDown += chunk.length;
    if (this.queued > HIGH_WATER) this.from.pause();
    this.schedule();
  }

  held() {
    return this.conn.heldUntil > Date.now() || this.conn.route.heldUntil > Date.now();
  }

  schedule() {
    if (this.timer !== null || this.queue.length === 0 || this.conn.closed || this.to === null) return;
    const now = Date.now();
    const wait = this.held() ? Math.max(this.conn.heldUntil, this.conn.route.heldUntil) - now : this.queue[0].due - now;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.drain();
    }, Math.max(0, Math.ceil(wait)));
  }

  drain() {
    if (this.conn.closed || this.to === null) return;
    const now = Date.now();
    if (!this.held()) {
      while (this.queue.length > 0 && this.queue[0].due <= now) {
        const { chunk } = this.queue.shift();
        this.queued -= chunk.length;
        this.to.write(chunk);
      }
      if (this.queued <= HIGH_WATER / 2 && this.from.isPaused()) this.from.resume();
    }
    this.schedule();
  }

  /** Held: the source is not read (what the kernel buffers waits there); restored: read again. */
  hold(on) {
    if (on) this.from.pause();
    else if (this.queued <= HIGH_WATER / 2) this.from.resume();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (!on) this.schedule();
  }
}

/** What a test sees of a connection (and what reset / stall picks are given). */
function view(c) {
  return { id: c.id, route: c.route.index, opened: c.opened, bytesUp: c.bytesUp, bytesDown: c.bytesDown };
}

class FaultProxy {
  /** Starts listening on every route's port; resolves with the proxy. */
  static async start(routes) {
    const proxy = new FaultProxy(routes);
    await Promise.all(proxy.routes.map((r) => new Promise((resolve, reject) => {
      r.server.once('error', reject);
      r.server.listen(r.listen, '127.0.0.1', () => {
        r.server.off('error', reject);
        r.listen = r.server.address().port;
        resolve();
      });
    })));
    return proxy;
  }

  constructor(routes) {
    if (!Array.isArray(routes) || routes.length === 0) throw new TypeError('FaultProxy: routes must be a non-empty array');
    this.nextId = 1;
    this.conns = new Set();
    this.timers = new Set();
    this.routes = routes.map((r, index) => {
      const route = {
        index,
        listen: r.listen ?? 0,
        target: { host: r.target.host ?? '127.0.0.1', port: r.target.port },
        latencyMs: 0,
        spikeMs: 0,
        spikeUntil: 0,
        bandwidth: 0,
        heldUntil: 0,
        up: { nextFree: 0 },
        down: { nextFree: 0 },
        accepted: 0,
        resets: 0,
      };
      route.server = net.createServer((socket) => this.accept(route, socket));
      return route;
    });
  }

  /** The ports listened on, by route. */
  ports() {
    return this.routes.map((r) => r.listen);
  }

  accept(route, client) {
    route.accepted++;
    const conn = {
      id: this.nextId++, route, client, upstream: null, opened: Date.now(), bytesUp: 0, bytesDown: 0, heldUntil: 0, closed: false,
    };
    this.conns.add(conn);
    client.setNoDelay(true);
    conn.upPipe = new Pipe(conn, route.up, client, null, true);
    const close = () => {
      if (conn.closed) return;
      conn.closed = true;
      this.conns.delete(conn);
      for (const p of [conn.upPipe, conn.downPipe]) if (p && p.timer !== null) clearTimeout(p.timer);
      client.destroy();
      if (conn.upstream) conn.upstream.destroy();
    };
    conn.close = close;
    client.on('error', close);
    client.on('close', close);
    const connect = () => {
      if (conn.closed) return;
      const upstream = net.connect(route.target.port, route.target.host);
      conn.upstream = upstream;
      upstream.setNoDelay(true);
      upstream.on('error', close);
      upstream.on('close', close);
      upstream.on('connect', () => {
        conn.downPipe = new Pipe(conn, route.down, upstream, client, false);
        conn.upPipe.to = upstream;
        conn.upPipe.drain();
      });
    };
    // Blackholed: accepted, held without an upstream until the route is restored.
    const wait = route.heldUntil - Date.now();
    if (wait > 0) this.later(connect, wait);
    else connect();
  }

  later(fn, ms) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  pick(route) {
    return route === undefined || route === null ? this.routes : [this.routes[route]];
  }

  /** Sets latencyMs and / or bandwidth (bytes/s, 0 = unlimited) on one route or all. */
  set({ latencyMs, bandwidth } = {}, route) {
    for (const r of this.pick(route)) {
      if (latencyMs !== undefined) r.latencyMs = latencyMs;
      if (bandwidth !== undefined) {
        r.bandwidth = bandwidth;
        r.up.nextFree = 0;
        r.down.nextFree = 0;
      }
    }
  }

  /** Adds `ms` of latency to what arrives during the next `forMs`; resolves when the spike ends. */
  spike(ms, forMs, route) {
    const until = Date.now() + forMs;
    for (const r of this.pick(route)) {
      r.spikeMs = ms;
      r.spikeUntil = until;
    }
    return new Promise((resolve) => this.later(resolve, forMs));
  }

  /** Resets the chosen connections (RST to the client); returns how many. */
  reset(route, pick = () => true) {
    let n = 0;
    for (const conn of [...this.conns]) {
      if ((route !== undefined && route !== null && conn.route.index !== route) || !pick(view(conn))) continue;
      n++;
      conn.route.resets++;
      conn.closed = true;
      this.conns.delete(conn);
      for (const p of [conn.upPipe, conn.downPipe]) if (p && p.timer !== null) clearTimeout(p.timer);
      if (typeof conn.client.resetAndDestroy === 'function') conn.client.resetAndDestroy();
      else conn.client.destroy();
      if (conn.upstream) conn.upstream.destroy();
    }
    return n;
  }

  hold(conns, until) {
    for (const conn of conns) {
      conn.heldUntil = Math.max(conn.heldUntil, until);
      for (const p of [conn.upPipe, conn.downPipe]) if (p) p.hold(true);
    }
  }

  /**
   * Restores the connections whose holds have all ended. One still held is tried again when its
   * hold ends: another hold may overlap, and a timer can fire a few ms before Date.now() reaches
   * the end it was set for (libuv starts timers from the loop's cached time), which used to leave
   * the connection paused until the client's own timeout.
   */
  release(conns) {
    const now = Date.now();
    for (const conn of conns) {
      if (conn.closed) continue;
      const left = Math.max(conn.heldUntil, conn.route.heldUntil) - now;
      if (left > 0) this.later(() => this.release([conn]), left);
      else for (const p of [conn.upPipe, conn.downPipe]) if (p) p.hold(false);
    }
  }

  /** Passes nothing on `route` for `forMs` (new connections held too); resolves once restored. */
  blackhole(route, forMs) {
    const r = this.routes[route];
    const until = Date.now() + forMs;
    r.heldUntil = Math.max(r.heldUntil, until);
    const conns = [...this.conns].filter((c) => c.route === r);
    for (const conn of conns) for (const p of [conn.upPipe, conn.downPipe]) if (p) p.hold(true);
    return new Promise((resolve) => this.later(() => {
      this.release([...this.conns].filter((c) => c.route === r));
      resolve();
    }, forMs));
  }

  /** Passes nothing on the connections pick(conn) chooses for `forMs`; resolves with how many, once restored. */
  stall(pick, forMs) {
    const conns = [...this.conns].filter((c) => pick(view(c)));
    this.hold(conns, Date.now() + forMs);
    return new Promise((resolve) => this.later(() => {
      this.release(conns);
      resolve(conns.length);
    }, forMs));
  }

  connections() {
    return [...this.conns].map(view);
  }

  /** Per route: { listen, target, accepted, resets, open }. */
  stats() {
    return this.routes.map((r) => ({
      listen: r.listen, target: `${r.target.host}:${r.target.port}`, accepted: r.accepted, resets: r.resets,
      open: [...this.conns].filter((c) => c.route === r).length,
    }));
  }

  async close() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const conn of [...this.conns]) conn.close();
    await Promise.all(this.routes.map((r) => new Promise((resolve) => r.server.close(() => resolve()))));
  }
}

/**
 * The routes of a proxied cluster from KAFKA_PROXY (scripts/kafka.sh proxy-map, exported by
 * scripts/test-kafka.sh): "listen>host:port,..." in node order; null when not set.
 */
function routesFromEnv(value = process.env.KAFKA_PROXY) {
  if (!value || !value.trim()) return null;
  return value.trim().split(',').map((item) => {
    const m = /^(\d+)>([^:]+):(\d+)$/.exec(item.trim());
    if (!m) throw new Error(`KAFKA_PROXY: "${item}" is not listenPort>host:port`);
    return { listen: Number(m[1]), target: { host: m[2], port: Number(m[3]) } };
  });
}

module.exports = { FaultProxy, routesFromEnv };
