// Types of gen-connection-budget.mjs for the chart tests.
export interface BudgetRow {
  name: string;
  min: number;
  max: number;
  surge: number;
  pool: number;
  steady: number;
  connections: number;
}
export interface Budget {
  rows: BudgetRow[];
  hooks: number;
  hookConnections: number;
  reserved: number;
  total: number;
  steady: number;
  maxConnections: number;
}
export declare const DOC: string;
export declare const VALUES: string;
export declare function surgeOf(strategy: unknown, replicas: number): number;
export declare function budgetOf(objects: unknown[], database: { reservedConnections?: number; maxConnections?: number }): Budget;
export declare function productionBudget(): Budget;
export declare function budgetTable(b: Budget): string;
export declare function docSection(text: string): string | undefined;
