// Batch sizes of the batched durable steps (issue 20): partner_db_batch_size{step} scraped from the
// job and submission services before and after a phase; the difference is that phase's batches.
const SOURCES = { job: ['SubmitJob', 'SettleJob'], submission: ['CreateSubmission'] };

async function scrape(stack) {
  const out = {};
  for (const [service, steps] of Object.entries(SOURCES)) {
    const text = await (await fetch(`http://127.0.0.1:${stack.ports.ops[service]}/metrics`)).text();
    for (const step of steps) {
      const buckets = {};
      for (const m of text.matchAll(new RegExp(`^partner_db_batch_size_bucket\\{le="([^"]+)",step="${step}"\\} (\\d+)`, 'gm'))) buckets[m[1]] = Number(m[2]);
      const num = (name) => Number(text.match(new RegExp(`^partner_db_batch_size_${name}\\{step="${step}"\\} (\\d+)`, 'm'))?.[1] ?? 0);
      out[step] = { buckets, batches: num('count'), calls: num('sum') };
    }
  }
  return out;
}

/**
 * Runs fn and returns its result with `batches`: per step, the number of statements, the calls they
 * carried, the mean batch size, the largest bucket reached, and how many batches fell in each
 * bucket (`le` = at most that many calls).
 */
export async function withBatchSizes(stack, fn) {
  const before = await scrape(stack);
  const result = await fn();
  const after = await scrape(stack);
  const batches = {};
  for (const [step, a] of Object.entries(after)) {
    const b = before[step];
    const n = a.batches - b.batches;
    const calls = a.calls - b.calls;
    const perBucket = {};
    let below = 0;
    let max = null;
    for (const le of Object.keys(a.buckets)) {
      const cumulative = a.buckets[le] - (b.buckets[le] ?? 0);
      if (cumulative - below > 0) {
        perBucket[le] = cumulative - below;
        max = le;
      }
      below = cumulative;
    }
    batches[step] = { statements: n, calls, meanSize: n ? Math.round((calls / n) * 100) / 100 : null, largestBucket: max, perBucket };
  }
  return { ...result, batches };
}
