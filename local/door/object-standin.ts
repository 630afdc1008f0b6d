/**
 * A local S3 bucket (S3 does not run here): an HTTP server answering the AWS SDK's path-style
 * `GetObject`, `HeadObject`, `PutObject` and `DeleteObject` (`AWS_ENDPOINT_URL_S3`), objects in
 * memory, for the bucket the template declares (`bucketFromTemplate`: its encryption decides what
 * an ETag is). What it answers, and where S3 says so:
 *
 *   - Amazon S3 User Guide — Add preconditions to S3 operations with conditional requests
 *     https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-requests.html
 *     and Amazon S3 API Reference — GetObject
 *     https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html
 *     a read with `If-Match` an ETag other than the object's is refused `412 PreconditionFailed`;
 *     `If-None-Match` the object's ETag (or `*`) answers `304 Not Modified` without a body;
 *     `If-Unmodified-Since` / `If-Modified-Since` likewise by Last-Modified, each only when its
 *     ETag counterpart is absent (If-Match true and If-Unmodified-Since false: 200; If-None-Match
 *     false and If-Modified-Since true: 304).
 *   - Amazon S3 User Guide — How to prevent object overwrites with conditional writes
 *     https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 *     and Amazon S3 API Reference — PutObject
 *     https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html
 *     a write with `If-None-Match: *` over an existing object is refused `412`; with `If-Match`
 *     another ETag `412`, and no object at all `404 NoSuchKey`.
 *   - Amazon S3 API Reference — Common Response Headers (ETag)
 *     https://docs.aws.amazon.com/AmazonS3/latest/API/RESTCommonResponseHeaders.html
 *     an object put in one part with SSE-S3 (or no encryption) has the MD5 of its body as its
 *     ETag; with SSE-KMS it has not (here: a random one).
 *   - Amazon S3 User Guide — Naming Amazon S3 objects
 *     https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html
 *     a key is at most 1,024 bytes of UTF-8 (`400 KeyTooLongError`).
 * A request for another bucket answers `404 NoSuchBucket`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ObjectStandin {
  endpoint: string;
  /** Stored bodies by `bucket/key`. */
  readonly objects: Map<string, StoredObject>;
  /** Requests answered, by method (`GET` includes the 304s and 412s). */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

export interface StoredObject {
  body: Buffer;
  etag: string;
  /** Epoch ms, to the second (as Last-Modified says it). */
  lastModified: number;
}

/** The bucket as the template declares it: what decides an ETag. */
export interface BucketDefinition {
  name: string;
  /** `AES256` (SSE-S3, the default) or `aws:kms`. */
  encryption: 'AES256' | 'aws:kms';
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
}

/** The bucket `logicalId` of a synthesized template, served under `name`. */
export function bucketFromTemplate(
  template: { Resources: Record<string, CfnResource> },
  logicalId: string,
  name: string,
): BucketDefinition {
  const bucket = template.Resources[logicalId];
  if (bucket?.Type !== 'AWS::S3::Bucket') throw new Error(`${logicalId} is not a bucket of the template`);
  const rules = (bucket.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration ?? []) as {
    ServerSideEncryptionByDefault?: { SSEAlgorithm?: string };
  }[];
  const algorithm = rules[0]?.ServerSideEncryptionByDefault?.SSEAlgorithm;
  return { name, encryption: algorithm === 'aws:kms' || algorithm === 'aws:kms:dsse' ? 'aws:kms' : 'AES256' };
}

const MAX_KEY_BYTES = 1024;

const xmlError = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An `If-Match` / `If-None-Match` list against an ETag (`*` matches any object; weak tags compare by value). */
function etagMatches(header: string, etag: string): boolean {
  return header.split(',').some((tag) => {
    const one = tag.trim().replace(/^W\//, '');
    return one === '*' || one === etag;
  });
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** A read's preconditions, in the order S3 documents: 412, 304, or undefined to serve the object. */
export function readPrecondition(headers: IncomingMessage['headers'], stored: StoredObject): 412 | 304 | undefined {
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  const since = (name: string) => (typeof headers[name] === 'string' ? Date.parse(headers[name]) : Number.NaN);
  if (typeof ifMatch === 'string' && !etagMatches(ifMatch, stored.etag)) return 412;
  const unmodifiedSince = since('if-unmodified-since');
  if (ifMatch === undefined && !Number.isNaN(unmodifiedSince) && seconds(stored.lastModified) > seconds(unmodifiedSince)) return 412;
  if (typeof ifNoneMatch === 'string' && etagMatches(ifNoneMatch, stored.etag)) return 304;
  const modifiedSince = since('if-modified-since');
  if (ifNoneMatch === undefined && !Number.isNaN(modifiedSince) && seconds(stored.lastModified) <= seconds(modifiedSince)) return 304;
  return undefined;
}

/** A write's preconditions: 412, 404 (If-Match and no object), or undefined to write. */
export function writePrecondition(headers: IncomingMessage['headers'], stored: StoredObject | undefined): 412 | 404 | undefined {
  const ifNoneMatch = headers['if-none-match'];
  const ifMatch = headers['if-match'];
  if (ifNoneMatch === '*' && stored !== undefined) return 412;
  if (typeof ifMatch === 'string' && stored === undefined) return 404;
  if (typeof ifMatch === 'string' && !etagMatches(ifMatch, stored!.etag)) return 412;
  return undefined;
}

/** One request to `bucket/key` (the path), answered as S3 answers it. */
function answer(
  { bucket, objects }: { bucket: BucketDefinition; objects: ObjectStandin['objects'] },
  { req, res, path, body }: { req: IncomingMessage; res: ServerResponse; path: string; body: Buffer },
): unknown {
  const slash = path.indexOf('/');
  const [name, key] = slash < 0 ? [path, ''] : [path.slice(0, slash), path.slice(slash + 1)];
  const xml = (status: number, code: string, message: string) =>
    res.writeHead(status, { 'content-type': 'application/xml' }).end(xmlError(code, message));
  if (name !== bucket.name) return xml(404, 'NoSuchBucket', 'The specified bucket does not exist');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return xml(400, 'KeyTooLongError', 'Your key is too long');
  const stored = objects.get(path);
  const headers = (o: StoredObject) => ({ etag: o.etag, 'last-modified': new Date(o.lastModified).toUTCString() });
  if (req.method === 'PUT') {
    const refused = writePrecondition(req.headers, stored);
    if (refused === 412) return xml(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
    if (refused === 404) return xml(404, 'NoSuchKey', 'The specified key does not exist.');
    const etag =
      bucket.encryption === 'AES256' ? `"${createHash('md5').update(body).digest('hex')}"` : `"${randomBytes(16).toString('hex')}"`;
    const object = { body, etag, lastModified: seconds(Date.now()) * 1000 };
    objects.set(path, object);
    return res.writeHead(200, headers(object)).end();
  }
  if (req.method === 'DELETE') {
    objects.delete(path);
    return res.writeHead(204).end();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return xml(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  if (stored === undefined)
    return req.method === 'HEAD' ? res.writeHead(404).end() : xml(404, 'NoSuchKey', 'The specified key does not exist.');
  const precondition = readPrecondition(req.headers, stored);
  if (precondition === 304) return res.writeHead(304, headers(stored)).end();
  if (precondition === 412) return xml(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  res.writeHead(200, { ...headers(stored), 'content-length': stored.body.length }).end(req.method === 'HEAD' ? undefined : stored.body);
}

export async function startObjectStandin(bucket: BucketDefinition): Promise<ObjectStandin> {
  const objects: ObjectStandin['objects'] = new Map();
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://local').pathname.slice(1));
    requests.set(req.method ?? '', (requests.get(req.method ?? '') ?? 0) + 1);
    bodyOf(req)
      .then((body) => answer({ bucket, objects }, { req, res, path, body }))
      .catch(() => res.writeHead(500).end());
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
