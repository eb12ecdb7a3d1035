#!/usr/bin/env node
// The `partner` command's entry point: runs the CLI with the process's streams and environment;
// Ctrl-C cancels what is in flight (exit 130).
import { run } from './cli.js';

const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
process.exitCode = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }, controller.signal);
