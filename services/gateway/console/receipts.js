// Receipt verification in the browser (API.md "Signed receipts"): a receipt is a compact JWS (ES256)
// checked with WebCrypto against the public keys of /.well-known/receipt-keys.json, which the
// gateway serves (no token, no third party). Verified means: the key the header names is in that
// document and the signature over "<header>.<payload>" holds.
let keys;

const b64url = (s) => {
  const b = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b + '='.repeat((4 - (b.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
};
const decodeJson = (s) => JSON.parse(new TextDecoder().decode(b64url(s)));

async function receiptKeys() {
  keys ??= fetch('/.well-known/receipt-keys.json', { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : { keys: [] }));
  return keys;
}

/** {verified, payload?, reason?} */
export async function verifyReceipt(jws) {
  try {
    const [h, p, s] = jws.split('.');
    const header = decodeJson(h);
    const payload = decodeJson(p);
    if (header.alg !== 'ES256') return { verified: false, payload, reason: `algorithm ${header.alg}` };
    const jwk = (await receiptKeys()).keys.find((k) => k.kid === header.kid);
    if (!jwk) return { verified: false, payload, reason: `key ${header.kid} is not in the receipt keys` };
    const key = await crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, ext: true }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    const verified = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, b64url(s), new TextEncoder().encode(`${h}.${p}`));
    return { verified, payload, ...(verified ? {} : { reason: 'the signature does not match' }) };
  } catch (err) {
    return { verified: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
