// RFC 7240 Prefer: the `wait` preference. N is whole seconds, clamped to 0..maxWait; a malformed
// wait preference is ignored, as the RFC asks of preferences a server does not understand.
export function parsePreferWait(header: string | undefined, maxWait = 30): number | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const m = /^\s*wait\s*=\s*(?:"(\d{1,6})"|(\d{1,6}))\s*(?:;.*)?$/i.exec(part);
    if (m) return Math.min(maxWait, Number(m[1] ?? m[2]));
  }
  return undefined;
}
