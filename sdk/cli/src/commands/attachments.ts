// `partner attachments upload|list|get|download|delete`: a submission's files.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, openAsBlob, renameSync, rmSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { PartnerError, type DocumentType } from '@partner/sdk';
import { formatBytes } from '../output.js';
import { DOCUMENT_TYPES, EXIT, intOption, mutation, UsageError, type Command, type Context } from '../command.js';

export const ATTACHMENT_COMMANDS: Record<string, Command> = {
  'attachments upload': {
    usage: 'attachments upload SUBMISSION_ID FILE [--type DOCUMENT_TYPE] [--content-type MEDIA_TYPE] [--wait SECONDS] [--idempotency-key KEY]',
    summary: `attach a file (document types: ${DOCUMENT_TYPES.join(', ')})`,
    examples: ['partner attachments upload SUBMISSION_ID loss-runs.pdf --type loss_run'],
    args: ['SUBMISSION_ID', 'FILE'],
    options: ['type', 'content-type', 'wait', 'idempotency-key'],
    run: async (ctx, [submissionId, path]) => {
      const type = ctx.values.type;
      if (type !== undefined && !DOCUMENT_TYPES.includes(type as DocumentType)) {
        throw new UsageError(`--type must be one of ${DOCUMENT_TYPES.join(', ')}`);
      }
      let stat;
      try {
        stat = statSync(path!);
      } catch {
        throw new UsageError(`cannot read ${path}`);
      }
      if (!stat.isFile()) throw new UsageError(`${path} is not a file`);
      const file = await openAsBlob(path!);
      const fileName = basename(path!);
      const client = ctx.client();
      const upload = {
        fileName,
        ...(type ? { documentType: type as DocumentType } : {}),
        ...(ctx.values['content-type'] ? { contentType: ctx.values['content-type'] } : {}),
        onProgress: (p: { sentBytes: number; totalBytes: number }) => {
          if (p.sentBytes < p.totalBytes) ctx.progress.bytes(`uploading ${fileName}`, p.sentBytes, p.totalBytes);
          else ctx.progress.spin(`${fileName} uploaded, waiting for the attachment job`);
        },
      };
      return mutation(
        ctx,
        'attachment',
        (opts) => client.uploadAttachment(submissionId!, file, { ...upload, ...opts }),
        (opts) => client.startAttachmentUpload(submissionId!, file, { ...upload, ...opts }),
      );
    },
  },
  'attachments list': {
    usage: 'attachments list SUBMISSION_ID [--limit N] [--cursor C] [--all]',
    summary: "a submission's attachments, newest first",
    examples: ['partner attachments list SUBMISSION_ID'],
    args: ['SUBMISSION_ID'],
    options: ['limit', 'cursor', 'all'],
    run: async (ctx, [submissionId]) => {
      const v = ctx.values;
      if (v.all && v.cursor) throw new UsageError('--all and --cursor do not go together');
      const limit = intOption(v, 'limit');
      const columns: [string, string][] = [
        ['fileName', 'file'],
        ['documentType', 'type'],
        ['contentType', 'media type'],
        ['size', 'size'],
        ['createdAt', 'created'],
        ['attachmentId', 'id'],
      ];
      const rows = (items: { sizeBytes: number }[]) => items.map((a) => ({ ...a, size: formatBytes(a.sizeBytes) }));
      const client = ctx.client();
      if (v.all) {
        const items = [];
        for await (const a of client.iterateAttachments(submissionId!, limit ? { limit } : {}, { signal: ctx.signal })) items.push(a);
        ctx.out.table({ items, nextCursor: null }, rows(items), columns);
      } else {
        const page = await client.listAttachments(submissionId!, { ...(limit ? { limit } : {}), ...(v.cursor ? { cursor: v.cursor } : {}) }, { signal: ctx.signal });
        ctx.out.table(page, rows(page.items), columns, page.nextCursor ? `more: --cursor ${page.nextCursor}` : undefined);
      }
      return EXIT.ok;
    },
  },
  'attachments get': {
    usage: 'attachments get SUBMISSION_ID ATTACHMENT_ID',
    summary: 'one attachment record',
    examples: ['partner attachments get SUBMISSION_ID ATTACHMENT_ID'],
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: [],
    run: async (ctx, [submissionId, attachmentId]) => {
      ctx.out.record(await ctx.client().getAttachment(submissionId!, attachmentId!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'attachments download': {
    usage: 'attachments download SUBMISSION_ID ATTACHMENT_ID [-o FILE|-] [--force]',
    summary: "save an attachment's bytes (default: under its own name here; -o - writes to stdout)",
    examples: ['partner attachments download SUBMISSION_ID ATTACHMENT_ID', 'partner attachments download SUBMISSION_ID ATTACHMENT_ID -o - | sha256sum'],
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: ['output', 'force'],
    run: download,
  },
  'attachments delete': {
    usage: 'attachments delete SUBMISSION_ID ATTACHMENT_ID [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'delete an attachment (a job)',
    examples: ['partner attachments delete SUBMISSION_ID ATTACHMENT_ID'],
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [submissionId, attachmentId]) => {
      const client = ctx.client();
      return mutation(ctx, 'deletion', (opts) => client.deleteAttachment(submissionId!, attachmentId!, opts));
    },
  },
};

async function download(ctx: Context, [submissionId, attachmentId]: string[]): Promise<number> {
  const client = ctx.client();
  const target = ctx.values.output;
  const dl = await client.downloadAttachment(submissionId!, attachmentId!, { signal: ctx.signal });
  const hash = createHash('sha256');
  let received = 0;
  const counted = dl.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hash.update(chunk);
        received += chunk.byteLength;
        ctx.progress.bytes('downloading', received, dl.contentLength ?? received);
        controller.enqueue(chunk);
      },
    }),
  );
  const check = () => {
    const sha256 = hash.digest('hex');
    if (dl.sha256 && sha256 !== dl.sha256) throw new PartnerError(`the download is corrupt (sha256 ${sha256}, expected ${dl.sha256}); try again`, true);
    return sha256;
  };
  if (target === '-') {
    await counted.pipeTo(Writable.toWeb(ctx.io.stdout as Writable), { signal: ctx.signal });
    ctx.progress.done();
    check();
    return EXIT.ok;
  }
  const file = resolve(target ?? safeName(dl.fileName ?? attachmentId!));
  if (existsSync(file) && !ctx.values.force) {
    await dl.body.cancel().catch(() => undefined);
    throw new UsageError(`${file} exists; use --force to replace it, or -o another name`, { usageHint: false });
  }
  const partial = `${file}.partial`;
  try {
    await counted.pipeTo(Writable.toWeb(createWriteStream(partial, { mode: 0o600 })), { signal: ctx.signal });
    const sha256 = check();
    renameSync(partial, file);
    ctx.progress.done();
    ctx.out.record({ file, bytes: received, sha256, contentType: dl.contentType });
    return EXIT.ok;
  } catch (err) {
    ctx.progress.done();
    rmSync(partial, { force: true });
    throw err;
  }
}

/** A file name from the server, made safe to create in the current directory. */
function safeName(name: string): string {
  const base = [...basename(name.replace(/\\/g, '/'))].map((c) => (c.charCodeAt(0) < 0x20 ? '_' : c)).join('');
  return base === '' || base === '.' || base === '..' ? 'attachment' : base;
}
