// The console's calls: the session (who it is, and the CSRF token) and the same /v1 API partners
// call, authenticated by the HttpOnly session cookie the browser sends on its own. Every mutation
// carries X-CSRF-Token. Nothing here is stored (no localStorage, no sessionStorage).
let session;

export async function loadSession() {
  const res = await fetch('/console/session', { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (res.status === 401) {
    location.reload();
    throw new Error('the console session has ended');
  }
  session = await res.json();
  return session;
}

export const currentSession = () => session;

/** A /v1 call: {status, ok, body, headers}; an absent route (this deployment lacks it) has absent = true. */
export async function api(method, path, opts = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  const headers = { accept: 'application/json', ...(opts.headers ?? {}) };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = session?.csrfToken ?? '';
  let body;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(url, { method, headers, body, credentials: 'same-origin' });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (res.status === 401) location.assign('/console/');
  const absent = res.status === 404 && typeof json?.error?.message === 'string' && json.error.message.startsWith('no route for');
  return { status: res.status, ok: res.ok, body: json, headers: res.headers, absent };
}

/** Every item of a list, following nextCursor, up to maxPages pages. */
export async function listAll(path, query = {}, maxPages = 10) {
  const items = [];
  let cursor;
  for (let page = 0; page < maxPages; page++) {
    const r = await api('GET', path, { query: { ...query, limit: 200, ...(cursor ? { cursor } : {}) } });
    if (!r.ok) return { ...r, items };
    items.push(...(r.body.items ?? []));
    cursor = r.body.nextCursor;
    if (!cursor || (r.body.items ?? []).length === 0) return { ...r, items, complete: true };
  }
  return { status: 200, ok: true, items, complete: false };
}

export const errorText = (r) =>
  r.body?.error ? `${r.status} ${r.body.error.code}: ${r.body.error.message}` : `HTTP ${r.status}`;
