// Names database spans by what the statement does, per the OpenTelemetry database conventions
// ({db.operation.name} {db.collection.name}, e.g. `INSERT jobs`, `SELECT submissions`), instead of the
// pg instrumentation's `pg.query:<prepared statement name>`: statements are prepared under a hash
// (pg.ts prepared()), so every span would otherwise read `pg.query:p_3f1c…`.

const OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'BEGIN', 'COMMIT', 'ROLLBACK', 'CREATE', 'ALTER', 'DROP', 'SET', 'LISTEN', 'NOTIFY', 'TRUNCATE', 'LOCK']);
const IDENT = String.raw`("?[A-Za-z_][\w$]*"?(?:\."?[A-Za-z_][\w$]*"?)?)`;

/** Strips comments and string literals, so keywords inside them are not taken for the statement's. */
function code(text: string): string {
  return text
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''");
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
  const pattern: Record<string, RegExp> = {
    INSERT: new RegExp(String.raw`^INSERT\s+INTO\s+${IDENT}`, 'i'),
    UPDATE: new RegExp(String.raw`^UPDATE\s+(?:ONLY\s+)?${IDENT}`, 'i'),
    DELETE: new RegExp(String.raw`^DELETE\s+FROM\s+(?:ONLY\s+)?${IDENT}`, 'i'),
    MERGE: new RegExp(String.raw`^MERGE\s+INTO\s+${IDENT}`, 'i'),
    SELECT: new RegExp(String.raw`\bFROM\s+(?:ONLY\s+)?${IDENT}`, 'i'),
    TRUNCATE: new RegExp(String.raw`^TRUNCATE\s+(?:TABLE\s+)?${IDENT}`, 'i'),
    LOCK: new RegExp(String.raw`^LOCK\s+(?:TABLE\s+)?${IDENT}`, 'i'),
  };
  const table = pattern[operation]?.exec(sql)?.[1]?.replace(/"/g, '');
  // SELECT without FROM (SELECT 1, SELECT pg_advisory_lock(...)) or a FROM of a function call.
  if (!table || (operation === 'SELECT' && /^\w+\s*\(/.test(sql.slice(sql.search(/\bFROM\b/i) + 4).trim()))) return { name: operation, operation };
  return { name: `${operation} ${table}`, operation, collection: table };
}
