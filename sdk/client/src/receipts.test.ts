// verifyReceipt and verifyChain offline: receipts signed here with jose as the service signs them
// (ES256, typ receipt+jws, the chain's seq and prev), then verified, changed, cut and re-keyed.
import { describe, expect, it } from 'vitest';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { receiptHash, ReceiptVerificationError, verifyChain, verifyReceipt, type ReceiptKeySet } from './receipts.js';

const enc = new TextEncoder();

async function keyPair(kid: string, range: { signedFrom: string; signedUntil?: string }) {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig', ...range } };
}

async function chainOf(n: number, key: Awaited<ReturnType<typeof keyPair>>, iat = Math.floor(Date.parse('2026-11-20T00:00:00Z') / 1000)): Promise<string[]> {
  const out: string[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const claims = {
      iss: 'https://api.uat.example.com', tenant: 't', partnerId: 'p', seq, prev: seq === 1 ? null : receiptHash(out[seq - 2]!),
      kind: 'submission.received', submissionId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71', jobId: `job_${seq}`, externalRef: 'r',
      receivedAt: '2026-11-20T00:00:00.000Z', iat, content: { canon: 'RFC8785', sha256: 'a'.repeat(64) },
    };
    out.push(await new CompactSign(enc.encode(JSON.stringify(claims))).setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'receipt+jws' }).sign(key.privateKey));
  }
  return out;
}

describe('verifyReceipt / verifyChain', () => {
  it('accepts a chain and returns its claims; refuses one changed byte, a missing receipt, another key or typ', async () => {
    const key = await keyPair('k1', { signedFrom: '2026-11-01T00:00:00.000Z' });
    const jwks: ReceiptKeySet = { keys: [key.jwk] };
    const chain = await chainOf(4, key);
    expect((await verifyChain(chain, jwks)).map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    expect(await verifyReceipt(chain[0]!, jwks)).toMatchObject({ seq: 1, prev: null, kind: 'submission.received' });

    const [h, p, s] = chain[2]!.split('.');
    const flipped = Buffer.from(p!, 'base64url');
    flipped[flipped.length - 3] ^= 1;
    const tampered = [...chain.slice(0, 2), `${h}.${flipped.toString('base64url')}.${s}`, chain[3]!];
    await expect(verifyChain(tampered, jwks)).rejects.toThrow(/receipt 3 of 4 \(after seq 2\)/);
    await expect(verifyChain(tampered, jwks)).rejects.toMatchObject({ seq: 3 });

    await expect(verifyChain([chain[0]!, chain[1]!, chain[3]!], jwks)).rejects.toThrow('broken link: seq 2 is followed by seq 4 (missing 3)');
    await expect(verifyChain([chain[0]!, chain[2]!], jwks)).rejects.toBeInstanceOf(ReceiptVerificationError);

    const other = await keyPair('k1', { signedFrom: '2026-11-01T00:00:00.000Z' });
    await expect(verifyReceipt(chain[0]!, { keys: [other.jwk] })).rejects.toThrow(/signature does not verify/);
    await expect(verifyReceipt(chain[0]!, { keys: [] })).rejects.toThrow(/no key k1/);
    const notReceipt = await new CompactSign(enc.encode('{}')).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'JWT' }).sign(key.privateKey);
    await expect(verifyReceipt(notReceipt, jwks)).rejects.toThrow(/typ is JWT/);
  });

  it('refuses a chain without its first receipts unless told where it starts, and refuses a wrong declared start', async () => {
    const key = await keyPair('k1', { signedFrom: '2026-11-01T00:00:00.000Z' });
    const jwks: ReceiptKeySet = { keys: [key.jwk] };
    const chain = await chainOf(5, key);

    // seq 1 removed: not a valid chain, and the error names what is missing.
    const withoutFirst = verifyChain(chain.slice(1), jwks);
    await expect(withoutFirst).rejects.toBeInstanceOf(ReceiptVerificationError);
    await expect(withoutFirst).rejects.toThrow('the chain starts at seq 2, not at the first, seq 1: missing seq 1');
    await expect(verifyChain(chain.slice(3), jwks)).rejects.toMatchObject({ seq: 1, missing: { fromSeq: 1, toSeq: 3 }, message: expect.stringContaining('missing seq 1 to 3') });

    // Told where it starts: seq 3, linking to the hash of seq 2.
    const prev = receiptHash(chain[1]!);
    expect((await verifyChain(chain.slice(2), jwks, { fromSeq: 3, prev })).map((c) => c.seq)).toEqual([3, 4, 5]);
    expect((await verifyChain(chain.slice(2), jwks, { fromSeq: 3, prev: prev.toUpperCase() })).map((c) => c.seq)).toEqual([3, 4, 5]);
    expect((await verifyChain(chain, jwks, { fromSeq: 1 })).map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    // A wrong prev, a later first receipt than declared (seq 3 missing), an earlier one.
    await expect(verifyChain(chain.slice(2), jwks, { fromSeq: 3, prev: receiptHash(chain[0]!) })).rejects.toMatchObject({ seq: 3, message: expect.stringContaining("seq 3's prev is") });
    await expect(verifyChain(chain.slice(3), jwks, { fromSeq: 3, prev })).rejects.toMatchObject({ seq: 3, missing: { fromSeq: 3, toSeq: 3 }, message: expect.stringContaining('not at the declared seq 3: missing seq 3') });
    await expect(verifyChain(chain.slice(1), jwks, { fromSeq: 3, prev })).rejects.toThrow('the chain starts at seq 2, before the declared seq 3');
    // A start that cannot be one is a programming error.
    await expect(verifyChain(chain.slice(2), jwks, { fromSeq: 3 })).rejects.toThrow(TypeError);
    await expect(verifyChain(chain.slice(2), jwks, { prev })).rejects.toThrow(TypeError);
    await expect(verifyChain(chain, jwks, { fromSeq: 1, prev })).rejects.toThrow(TypeError);
    await expect(verifyChain(chain, jwks, { fromSeq: 0 })).rejects.toThrow(TypeError);
    // A gap of several names them all.
    await expect(verifyChain([chain[0]!, chain[1]!, chain[4]!], jwks)).rejects.toMatchObject({ seq: 3, missing: { fromSeq: 3, toSeq: 4 }, message: expect.stringContaining('(missing 3 to 4)') });
  });

  it("refuses a receipt its key did not sign in the key's published range", async () => {
    const retired = await keyPair('old', { signedFrom: '2026-01-01T00:00:00.000Z', signedUntil: '2026-06-01T00:00:00.000Z' });
    const [late] = await chainOf(1, retired, Math.floor(Date.parse('2026-07-01T00:00:00Z') / 1000));
    await expect(verifyReceipt(late!, { keys: [retired.jwk] })).rejects.toThrow(/key old was not signing at iat/);
    const [inRange] = await chainOf(1, retired, Math.floor(Date.parse('2026-05-31T23:59:59Z') / 1000));
    await expect(verifyReceipt(inRange!, { keys: [retired.jwk] })).resolves.toMatchObject({ seq: 1 });
  });
});
