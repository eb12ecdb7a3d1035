// Attachments (client.attachments, /v1/submissions/{id}/attachments): uploads and deletions are jobs
// (mutations.ts); listing, reading, and downloading the bytes as a stream. The types are generated
// from the OpenAPI document (wire-types.ts).
import type { Connection } from './connection.js';
import { multipartBody } from './multipart.js';
import type { MutationOutcome } from './mutations.js';
import type { CallOptions, MutationOptions, UploadOptions } from './options.js';
import { paginate, seg, type RequestSpec, type WithResponse } from './transport.js';
import type { Page, PageParams } from './types.js';
import type { Attachment, AttachmentDeleted } from './wire-types.js';

export type { Attachment, AttachmentDeleted, DocumentType } from './wire-types.js';

export interface AttachmentDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  contentLength: number | undefined;
  fileName: string | undefined;
  /** Hex sha256 of the bytes, from the ETag. */
  sha256: string | undefined;
}

export class Attachments {
  constructor(private readonly connection: Connection) {}

  /**
   * POST /v1/submissions/{id}/attachments: uploads the file (a Blob or File, or bytes) and resolves
   * with the attachment record once the job has succeeded. A resend re-reads the Blob.
   */
  async upload(submissionId: string, file: Blob | Uint8Array, opts: UploadOptions = {}): Promise<WithResponse<Attachment>> {
    return this.connection.mutations.mutate<Attachment>(() => uploadSpec(submissionId, file, opts), opts);
  }

  /**
   * The upload without polling: the record if it settled within the wait, else the job handle. Throws
   * at once (not as a rejection) when the file cannot be typed, as it always has.
   */
  startUpload(submissionId: string, file: Blob | Uint8Array, opts: Omit<UploadOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<Attachment>> {
    return this.connection.mutations.start<Attachment>(uploadSpec(submissionId, file, opts), opts);
  }

  /** GET /v1/submissions/{id}/attachments: one page. */
  async list(submissionId: string, params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Attachment>>> {
    return (await this.connection.transport.request<Page<Attachment>>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/attachments`, query: { ...params }, ...opts })).body;
  }

  /** Every attachment of a submission, page after page. */
  iterate(submissionId: string, params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Attachment> {
    return paginate(params, (p) => this.list(submissionId, p, opts));
  }

  /** GET /v1/submissions/{id}/attachments/{attachmentId}. */
  async get(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<WithResponse<Attachment>> {
    return (await this.connection.transport.request<Attachment>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}`, ...opts })).body;
  }

  /** GET .../content: the bytes as a stream (read it, or cancel it), with their type, size, name and sha256. */
  async download(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<AttachmentDownload> {
    const res = await this.connection.transport.request<ReadableStream<Uint8Array>>({
      method: 'GET',
      path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}/content`,
      stream: true,
      ...opts,
    });
    const length = res.headers.get('content-length');
    const etag = res.headers.get('etag');
    return {
      body: res.body,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
      fileName: fileNameOf(res.headers.get('content-disposition')),
      sha256: etag ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined,
    };
  }

  /** DELETE /v1/submissions/{id}/attachments/{attachmentId}, as a job; resolves once it has succeeded. */
  async delete(submissionId: string, attachmentId: string, opts: MutationOptions = {}): Promise<WithResponse<AttachmentDeleted>> {
    return this.connection.mutations.mutate<AttachmentDeleted>(
      () => ({ method: 'DELETE', path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}` }),
      opts,
    );
  }
}

/** The upload request: a multipart body made afresh for every attempt (a resend re-reads the Blob). */
function uploadSpec(submissionId: string, file: Blob | Uint8Array, opts: UploadOptions): RequestSpec {
  const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>]);
  const named = opts.fileName ?? (typeof File !== 'undefined' && blob instanceof File && blob.name ? blob.name : undefined);
  // Without a media type or a file name to type it by, the API could only refuse the upload (415).
  if (!opts.contentType && !blob.type && !(named && /\.[A-Za-z0-9]+$/.test(named))) {
    throw new TypeError(
      'uploadAttachment: the file has no media type and no file name with an extension; pass contentType (e.g. "application/pdf") ' +
        'or fileName (e.g. "loss-runs.pdf"), or a File/Blob that has a type',
    );
  }
  const fileName = named ?? 'attachment';
  const contentType = opts.contentType ?? (blob.type || 'application/octet-stream');
  const form = multipartBody(blob, fileName, contentType, opts.documentType ? { documentType: opts.documentType } : {});
  return {
    method: 'POST',
    path: `/v1/submissions/${seg(submissionId)}/attachments`,
    body: (stop) => ({ body: form.stream(opts.onProgress, stop), contentType: form.contentType, length: form.length }),
  };
}

/** The file name of a Content-Disposition header, preferring filename* (RFC 6266, RFC 5987). */
function fileNameOf(header: string | null): string | undefined {
  if (!header) return undefined;
  // Read parameter by parameter (split on ';'), not with one unanchored pattern over the header,
  // which would try every `filename*=` of a hostile header to its end (quadratic).
  const star = header
    .split(';')
    .map((p) => /^\s*filename\*\s*=\s*[^'\s]*'[^']*'(.+)$/i.exec(p)?.[1])
    .find((v) => v !== undefined);
  if (star) {
    try {
      return decodeURIComponent(star.trim());
    } catch {
      // fall back to filename
    }
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header) ?? /filename\s*=\s*([^;\s]+)/i.exec(header);
  return plain?.[1]?.replace(/\\(.)/g, '$1');
}
