// A partner flooding POST /v1/submissions/validate with 1 MB bodies (issue 48, 3), run as a process of
// its own so that its sending does not share an event loop with what is measured (the bench's noisy
// neighbour phase and test/noisy-neighbour.test.ts run it). Arguments:
// the gateway's URL, a token, seconds, requests in flight. Prints {statuses: {code: count}} as JSON.
const [url, token, seconds, inFlight] = process.argv.slice(2);
const body = (i) =>
  JSON.stringify({
    externalRef: `flood-${i}`,
    submissionType: 'application',
    effectiveDate: '2027-01-01',
    productId: '00000000-0000-4000-8000-000000000000',
    ...(i % 2
      ? { applicant: { legalName: `${'a'.repeat(1_000_000)}\u0001` } }
      : { applicant: { legalName: 'Flood' }, ...Object.fromEntries(Array.from({ length: 9000 }, (_, k) => [`k${k}`, 'x'.repeat(90)])) }),
  });
const bodies = [body(0), body(1)];
const statuses = {};
const until = Date.now() + Number(seconds) * 1000;
await Promise.all(
  Array.from({ length: Number(inFlight) }, async (_, i) => {
    while (Date.now() < until) {
      try {
        const r = await fetch(`${url}/v1/submissions/validate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: bodies[i % 2],
        });
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      } catch {
        // a connection the gateway closed after refusing the body: counted by its 429 when read
        statuses.reset = (statuses.reset ?? 0) + 1;
      }
    }
  }),
);
process.stdout.write(JSON.stringify({ statuses }));
