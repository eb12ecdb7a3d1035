// Types of admin-groups.mjs for the TypeScript that uses it (the tests).
import type { AdminIo, CommandGroup } from '@partner/shared/process/admin-cli';

export declare function loadAdminGroups(root: string): Promise<{
  groups: Record<string, CommandGroup>;
  receiptKeys: CommandGroup;
  runAdmin(groups: Record<string, CommandGroup>, argv: string[], io?: AdminIo): Promise<number>;
}>;
