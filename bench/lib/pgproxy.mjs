// A counting TCP proxy in front of PostgreSQL: services pointed at it (DATABASE_URL) work as usual
// while it reads the frontend side of the wire protocol and counts, per proxy, the round trips the
// service makes (a simple-protocol Query 'Q', or a Sync 'S' closing an extended-protocol batch) and
// the statements it runs ('Q' + Execute 'E'). Counting is exact and immediate, unlike
// pg_stat_database, whose per-backend counters PostgreSQL 15 flushes up to 10 s late.
import { createConnection, createServer } from 'node:net';

export class CountingPgProxy {
  constructor(name, upstream = { host: '127.0.0.1', port: 5432 }) {
    this.name = name;
    this.upstream = upstream;
    this.counts = { roundTrips: 0, statements: 0, connections: 0 };
    this.sockets = new Set();
  }

  async listen() {
    this.server = createServer((client) => this.onClient(client));
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    return this.port;
  }

  snapshot() {
    return { ...this.counts };
  }

  onClient(client) {
    this.counts.connections++;
    const server = createConnection(this.upstream);
    this.sockets.add(client);
    this.sockets.add(server);
    client.setNoDelay(true);
    server.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let started = false;
    const parse = (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (!started) {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          const code = buf.readInt32BE(4);
          if (buf.length < len) return;
          buf = buf.subarray(len);
          // SSLRequest / GSSENCRequest are followed by the real startup message.
          if (code !== 80877103 && code !== 80877104) started = true;
          continue;
        }
        if (buf.length < 5) return;
        const type = buf[0];
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) return;
        if (type === 0x51 /* Q */) {
          this.counts.roundTrips++;
          this.counts.statements++;
        } else if (type === 0x53 /* S */) this.counts.roundTrips++;
        else if (type === 0x45 /* E */) this.counts.statements++;
        buf = buf.subarray(len + 1);
      }
    };
    client.on('data', (d) => {
      parse(d);
      server.write(d);
    });
    server.on('data', (d) => client.write(d));
    const close = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('close', close);
    server.on('close', close);
    client.on('error', close);
    server.on('error', close);
  }

  async close() {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve()));
  }
}
