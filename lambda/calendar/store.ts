/**
 * Where the calendar keeps things: feed objects in the private bucket (read with If-None-Match:
 * an unchanged feed answers 304 and nothing else is read), a user's feed token (its SHA-256 only)
 * and the published projection in the door table. I/O only; docs/api.md, "Calendar".
 */
import { createHash, randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DOOR_KEYS } from './contract.js';
import { projectionOf, type Projection } from './projection.js';

/** A new feed token: 256 random bits, base64url (43 characters). */
export const newFeedToken = (): string => randomBytes(32).toString('base64url');
/** What is stored of a token, and names its feed object: SHA-256, base64url. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('base64url');

export type ObjectRead = { status: 'ok'; body: string; etag: string } | { status: 'not-modified'; etag: string } | { status: 'missing' };

export interface FeedObjects {
  get(key: string, ifNoneMatch?: string): Promise<ObjectRead>;
  put(key: string, body: string): Promise<void>;
  delete(key: string): Promise<void>;
}

const statusOf = (error: unknown): number | undefined => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

export function s3FeedObjects(s3: S3Client, bucket: string): FeedObjects {
  return {
    async get(key, ifNoneMatch) {
      try {
        const answer = await s3.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, ...(ifNoneMatch === undefined ? {} : { IfNoneMatch: ifNoneMatch }) }),
        );
        return { status: 'ok', body: (await answer.Body?.transformToString('utf-8')) ?? '', etag: answer.ETag ?? '' };
      } catch (error) {
        if (statusOf(error) === 304) return { status: 'not-modified', etag: ifNoneMatch ?? '' };
        if ((error as { name?: string }).name === 'NoSuchKey' || statusOf(error) === 404) return { status: 'missing' };
        throw error;
      }
    },
    async put(key, body) {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: 'text/calendar; charset=utf-8',
          CacheControl: 'max-age=300',
        }),
      );
    },
    async delete(key) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}

export interface UserFeed {
  hash: string;
  createdAt: number;
}

export interface DoorTable {
  userFeed(userId: string): Promise<UserFeed | undefined>;
  /** Stores the user's new feed; answers the one it replaced. */
  replaceUserFeed(userId: string, feed: UserFeed): Promise<UserFeed | undefined>;
  /** Removes the user's feed; answers the one removed. */
  removeUserFeed(userId: string): Promise<UserFeed | undefined>;
  projection(platform: string): Promise<{ projection: Projection; version: number }>;
  /** Stores the projection if it is still at `version` as read; false if another write came between. */
  saveProjection(platform: string, projection: Projection, version: number): Promise<boolean>;
}

const feedOf = (item: Record<string, unknown> | undefined): UserFeed | undefined =>
  typeof item?.hash === 'string' && typeof item.createdAt === 'number' ? { hash: item.hash, createdAt: item.createdAt } : undefined;

export function dynamoDoorTable(doc: DynamoDBDocumentClient, table: string): DoorTable {
  return {
    async userFeed(userId) {
      const answer = await doc.send(new GetCommand({ TableName: table, Key: { pk: DOOR_KEYS.userFeed(userId) }, ConsistentRead: true }));
      return feedOf(answer.Item);
    },
    async replaceUserFeed(userId, feed) {
      const answer = await doc.send(
        new PutCommand({ TableName: table, Item: { pk: DOOR_KEYS.userFeed(userId), ...feed }, ReturnValues: 'ALL_OLD' }),
      );
      return feedOf(answer.Attributes);
    },
    async removeUserFeed(userId) {
      const answer = await doc.send(
        new DeleteCommand({ TableName: table, Key: { pk: DOOR_KEYS.userFeed(userId) }, ReturnValues: 'ALL_OLD' }),
      );
      return feedOf(answer.Attributes);
    },
    async projection(platform) {
      const answer = await doc.send(new GetCommand({ TableName: table, Key: { pk: DOOR_KEYS.published(platform) }, ConsistentRead: true }));
      const item = answer.Item as { contests?: Record<string, unknown>; version?: number } | undefined;
      return { projection: projectionOf(item?.contests), version: item?.version ?? 0 };
    },
    async saveProjection(platform, projection, version) {
      try {
        await doc.send(
          new PutCommand({
            TableName: table,
            Item: { pk: DOOR_KEYS.published(platform), contests: projection.contests, version: version + 1 },
            ConditionExpression: version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
            ...(version === 0 ? {} : { ExpressionAttributeValues: { ':v': version } }),
          }),
        );
        return true;
      } catch (error) {
        if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
        throw error;
      }
    },
  };
}
