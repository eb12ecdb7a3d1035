// Preloaded into the gateway by the bench's waiters phase only (node --expose-gc --require this):
// SIGUSR2 runs a full garbage collection and then writes "gc\n" to stderr, so the bench can read the
// process's memory as the live cost of what it holds, not as garbage not yet collected.
'use strict';
process.on('SIGUSR2', () => {
  global.gc();
  global.gc();
  process.stderr.write('gc\n');
});
