#!/usr/bin/env node
// The `partner` command (added with the developer-experience issue).
import { SDK_VERSION } from '@partner/sdk';

process.stdout.write(`partner cli (sdk ${SDK_VERSION})\n`);
