/**
 * The local bucket (local/door/object-standin.ts) as the template declares the feed bucket,
 * through the AWS SDK: conditional reads and writes with S3's documented 304, 412 and 404, the
 * ETag an SSE-S3 object has (the MD5 of its body) and an SSE-KMS one has not, the key's bound,
 * and a bucket that is not the template's.
 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { feedBucketId } from '../../local/door/door.js';
import { bucketFromTemplate, startObjectStandin, type BucketDefinition } from '../../local/door/object-standin.js';
import { synthesizedTemplate } from '../support/tables.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function bucket(definition: BucketDefinition) {
  const standin = await startObjectStandin(definition);
  const s3 = new S3Client({ endpoint: standin.endpoint, forcePathStyle: true, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  closing.push(
    async () => s3.destroy(),
    () => standin.close(),
  );
  return { standin, s3 };
}

/** The status S3 answered (the SDK throws on 304, 404 and 412), and the error's name. */
async function statusOf(request: Promise<{ $metadata: { httpStatusCode?: number } }>): Promise<[number | undefined, string?]> {
  try {
    return [(await request).$metadata.httpStatusCode];
  } catch (error) {
    const e = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return [e.$metadata?.httpStatusCode, e.name];
  }
}

/** S3 answers 304 with no body (HTTP allows none), so the SDK's error has no code to name it by. */
const NOT_MODIFIED = expect.any(String);

const feedBucket = () => {
  const template = synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
  return bucketFromTemplate(template, feedBucketId(template), 'feeds');
};

describe('the feed bucket, as the template declares it', () => {
  it('is SSE-S3: an object put in one part has the MD5 of its body as its ETag', async () => {
    expect(feedBucket()).toEqual({ name: 'feeds', encryption: 'AES256' });
    const { s3 } = await bucket(feedBucket());
    const put = await s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'a.ics', Body: 'BEGIN:VCALENDAR' }));
    expect(put.ETag).toBe(`"${createHash('md5').update('BEGIN:VCALENDAR').digest('hex')}"`);
  });

  it('gives an SSE-KMS object an ETag that is not its MD5', async () => {
    const { s3 } = await bucket({ name: 'feeds', encryption: 'aws:kms' });
    const put = await s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'a.ics', Body: 'BEGIN:VCALENDAR' }));
    expect(put.ETag).not.toBe(`"${createHash('md5').update('BEGIN:VCALENDAR').digest('hex')}"`);
  });
});

describe('conditional reads (GetObject)', () => {
  it('answers If-None-Match, If-Match, If-Modified-Since and If-Unmodified-Since as S3 documents, together too', async () => {
    const { s3 } = await bucket(feedBucket());
    const { ETag: etag } = await s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'f.ics', Body: 'v1' }));
    const past = new Date(Date.now() - 3600_000);
    const future = new Date(Date.now() + 3600_000);
    const get = (conditions: Partial<ConstructorParameters<typeof GetObjectCommand>[0]>) =>
      statusOf(s3.send(new GetObjectCommand({ Bucket: 'feeds', Key: 'f.ics', ...conditions })));
    expect(await get({ IfNoneMatch: etag })).toEqual([304, NOT_MODIFIED]);
    expect(await get({ IfNoneMatch: '*' })).toEqual([304, NOT_MODIFIED]);
    expect(await get({ IfNoneMatch: '"other"' })).toEqual([200]);
    expect(await get({ IfMatch: '"other"' })).toEqual([412, 'PreconditionFailed']);
    expect(await get({ IfMatch: `"other", ${etag}` })).toEqual([200]);
    expect(await get({ IfModifiedSince: future })).toEqual([304, NOT_MODIFIED]);
    expect(await get({ IfModifiedSince: past })).toEqual([200]);
    expect(await get({ IfUnmodifiedSince: past })).toEqual([412, 'PreconditionFailed']);
    // If-Match true and If-Unmodified-Since false: 200. If-None-Match false and If-Modified-Since true: 304.
    expect(await get({ IfMatch: etag, IfUnmodifiedSince: past })).toEqual([200]);
    expect(await get({ IfNoneMatch: etag, IfModifiedSince: past })).toEqual([304, NOT_MODIFIED]);
    expect(await statusOf(s3.send(new HeadObjectCommand({ Bucket: 'feeds', Key: 'f.ics', IfNoneMatch: etag })))).toEqual([
      304,
      NOT_MODIFIED,
    ]);
    expect(await get({ Key: 'missing.ics' })).toEqual([404, 'NoSuchKey']);
  });
});

describe('conditional writes (PutObject)', () => {
  it('refuses If-None-Match: * over an object, If-Match another ETag (412) or no object (404)', async () => {
    const { s3, standin } = await bucket(feedBucket());
    const put = (body: string, conditions: Partial<ConstructorParameters<typeof PutObjectCommand>[0]> = {}) =>
      statusOf(s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'f.ics', Body: body, ...conditions })));
    expect(await put('v0', { IfMatch: '"anything"' })).toEqual([404, 'NoSuchKey']);
    expect(await put('v1', { IfNoneMatch: '*' })).toEqual([200]);
    expect(await put('v2', { IfNoneMatch: '*' })).toEqual([412, 'PreconditionFailed']);
    const etag = standin.objects.get('feeds/f.ics')!.etag;
    expect(await put('v3', { IfMatch: '"other"' })).toEqual([412, 'PreconditionFailed']);
    expect(await put('v3', { IfMatch: etag })).toEqual([200]);
    expect(standin.objects.get('feeds/f.ics')!.body.toString()).toBe('v3');
  });
});

describe('what S3 refuses outright', () => {
  it('a key over 1,024 bytes, and a bucket the template does not declare', async () => {
    const { s3 } = await bucket(feedBucket());
    expect(await statusOf(s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'é'.repeat(513), Body: 'x' })))).toEqual([
      400,
      'KeyTooLongError',
    ]);
    expect(await statusOf(s3.send(new PutObjectCommand({ Bucket: 'feeds', Key: 'é'.repeat(512), Body: 'x' })))).toEqual([200]);
    expect(await statusOf(s3.send(new GetObjectCommand({ Bucket: 'elsewhere', Key: 'a' })))).toEqual([404, 'NoSuchBucket']);
  });
});
