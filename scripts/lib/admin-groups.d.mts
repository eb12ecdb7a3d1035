// Types of admin-groups.mjs for the TypeScript that uses it (the tests).
import type { AdminIo, CommandGroup } from '@partner/shared/process/admin-cli';

interface Loaded {
  groups: Record<string, CommandGroup>;
  /** Each service's groups, by service. */
  byService: Record<string, Record<string, CommandGroup>>;
  runAdmin(groups: Record<string, CommandGroup>, argv: string[], io?: AdminIo): Promise<number>;
}

/** The service whose admin module declares each group. */
export declare const GROUP_SERVICES: Record<string, string>;
/** Every module: every group and the receipt-key group. */
export declare function loadAdminGroups(root: string): Promise<Loaded & { receiptKeys: CommandGroup }>;
/** The modules that argv needs (scripts/admin.mjs): the receipt-key group only for `key … --receipts`. */
export declare function loadAdminGroups(root: string, argv: string[]): Promise<Loaded & { receiptKeys: CommandGroup | undefined }>;
