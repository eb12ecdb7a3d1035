// Types of workspaces.mjs.
export declare function workspaceDirs(): string[];
