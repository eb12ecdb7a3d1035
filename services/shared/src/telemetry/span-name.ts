// Names database spans by what the statement does, per the OpenTelemetry database conventions
// ({db.operation.name} {db.collection.name}, e.g. `INSERT jobs`, `SELECT submissions`), instead of the
// pg instrumentation's `pg.query:<prepared statement name>`: statements are prepared under a hash
// (pg.ts prepared()), so every span would otherwise read `pg.query:p_3f1c…`.

const OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'BEGIN', 'COMMIT', 'ROLLBACK', 'CREATE', 'ALTER', 'DROP', 'SET', 'LISTEN', 'NOTIFY', 'TRUNCATE', 'LOCK']);
const IDENT = String.raw`("?[A-Za-z_][\w$]*"?(?:\."?[A-Za-z_][\w$]*"?)?)`;

/** The main table after each operation's keywords (made once: every statement of every service is named). */
const TABLE_PATTERNS: Readonly<Record<string, RegExp>> = {
  INSERT: new RegExp(String.raw`^INSERT\s+INTO\s+${IDENT}`, 'i'),
  UPDATE: new RegExp(String.raw`^UPDATE\s+(?:ONLY\s+)?${IDENT}`, 'i'),
  DELETE: new RegExp(String.raw`^DELETE\s+FROM\s+(?:ONLY\s+)?${IDENT}`, 'i'),
  MERGE: new RegExp(String.raw`^MERGE\s+INTO\s+${IDENT}`, 'i'),
  SELECT: new RegExp(String.raw`\bFROM\s+(?:ONLY\s+)?${IDENT}`, 'i'),
  TRUNCATE: new RegExp(String.raw`^TRUNCATE\s+(?:TABLE\s+)?${IDENT}`, 'i'),
  LOCK: new RegExp(String.raw`^LOCK\s+(?:TABLE\s+)?${IDENT}`, 'i'),
};
/** The patterns above, for test/regex-safety.test.ts. */
export const spanNamePatterns = (): RegExp[] => Object.values(TABLE_PATTERNS);

/** Strips comments and string literals, so keywords inside them are not taken for the statement's. */
function code(text: string): string {
  return withoutBlockComments(text.replace(/--[^\n]*/g, ' ')).replace(/'(?:[^']|'')*'/g, "''");
}

/** `/* … *\/` comments replaced by a space (indexOf, not /\/\*[\s\S]*?\*\//g, which is quadratic on unclosed ones). */
function withoutBlockComments(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = text.indexOf('/*', at);
    if (open < 0) return out + text.slice(at);
    const close = text.indexOf('*/', open + 2);
    if (close < 0) return out + text.slice(at);
    out += `${text.slice(at, open)} `;
    at = close + 2;
  }
}

/** The statement's operation and main table: `INSERT jobs`, `UPDATE outbox`, `SELECT` (no table), `WITH` CTEs by their main statement. */
export function querySpanName(text: string): { name: string; operation: string; collection?: string } {
  let sql = code(text).trim();
  // A CTE: the main statement follows the last top-level `) <keyword>`; good enough for span names.
  if (/^WITH\b/i.test(sql)) {
    const main = [...sql.matchAll(/\)\s*(SELECT|INSERT|UPDATE|DELETE|MERGE)\b/gi)].pop();
    if (main?.index !== undefined) sql = sql.slice(main.index + 1).trim();
  }
  const operation = (/^([A-Za-z]+)/.exec(sql)?.[1] ?? '').toUpperCase();
  if (!OPERATIONS.has(operation)) return { name: 'SQL', operation: operation || 'SQL' };
  const table = TABLE_PATTERNS[operation]?.exec(sql)?.[1]?.replace(/"/g, '');
  // SELECT without FROM (SELECT 1, SELECT pg_advisory_lock(...)) or a FROM of a function call.
  if (!table || (operation === 'SELECT' && /^\w+\s*\(/.test(sql.slice(sql.search(/\bFROM\b/i) + 4).trim()))) return { name: operation, operation };
  return { name: `${operation} ${table}`, operation, collection: table };
}
