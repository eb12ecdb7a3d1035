// A small keep-alive HTTP/1.1 client on node:http for the phases autocannon cannot express (a request
// that depends on the previous response, thousands of requests held open at once). Resolves with the
// status, headers, parsed body and the wall-clock time the response ended.
import http from 'node:http';
import { wallNow } from './load.mjs';

export function agents(n = 1) {
  return Array.from({ length: n }, () => new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 20_000 }));
}

export function request(url, { method = 'GET', headers = {}, body, agent, onSocketConnected } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const sentAt = wallNow();
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const endedAt = wallNow();
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode, headers: res.headers, body: parsed, text, sentAt, endedAt });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (onSocketConnected) {
      req.on('socket', (s) => {
        if (s.connecting) s.once('connect', onSocketConnected);
        else onSocketConnected();
      });
    }
    req.end(payload);
  });
}
