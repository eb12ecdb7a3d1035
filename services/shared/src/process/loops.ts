// Background loops a process runs besides its servers (sweeps, retention), under one policy: a pass
// runs every intervalMs, never two at once (a tick that finds a pass still running is skipped); a pass
// that fails is logged as a warning and the next tick runs it again, so a loop never dies of an error
// (database down, NATS down); on shutdown no new pass starts and the running one is awaited.
import type { Logger } from '../telemetry/logger.js';

export interface LoopSpec {
  /** Named in the warning of a failed pass ("<name> failed; will try again"). */
  name: string;
  intervalMs: number;
  /** One pass. `stopping()` turns true at shutdown: a long pass ends early. */
  run(stopping: () => boolean): Promise<void>;
}

export interface Loops {
  /** Starts a loop (intervalMs 0: none). */
  every(spec: LoopSpec): void;
  stop(): Promise<void>;
}

export function supervisedLoops(logger: Logger): Loops {
  let stopping = false;
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<void>>();
  return {
    every: (spec) => {
      if (spec.intervalMs <= 0 || stopping) return;
      let pass: Promise<void> | undefined;
      const tick = () => {
        if (pass || stopping) return;
        const p: Promise<void> = spec
          .run(() => stopping)
          .catch((err: unknown) => logger.warn({ err: (err as Error)?.message ?? String(err), loop: spec.name }, `${spec.name} failed; will try again`))
          .finally(() => {
            pass = undefined;
            running.delete(p);
          });
        pass = p;
        running.add(p);
      };
      const timer = setInterval(tick, spec.intervalMs);
      timer.unref();
      timers.push(timer);
    },
    stop: async () => {
      stopping = true;
      for (const t of timers) clearInterval(t);
      await Promise.all([...running]);
    },
  };
}
