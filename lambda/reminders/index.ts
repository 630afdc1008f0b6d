/**
 * The reminder write path (docs/tables.md, "The reminder write path"): what the app and the HTTP
 * API call to set, cancel and list a user's reminders. Every refusal is a ReminderError with a
 * stable `code`.
 */
export {
  createReminderClient,
  randomIntent,
  REMINDER_RETRY_BUDGET,
  type CancelResult,
  type ListResult,
  type ReminderClient,
  type ReminderDeps,
  type ReminderRetryBudget,
  type ReminderTables,
  type SetResult,
} from './client.js';
export type { ReminderView } from './decide.js';
export {
  ContestNotFoundError,
  ContestStartedError,
  InvalidInputError,
  ReminderConflictError,
  ReminderError,
  type ReminderErrorCode,
} from './errors.js';
export {
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  MAX_MINUTES_BEFORE,
  MAX_USER_ID_BYTES,
  type CancelInput,
  type ListInput,
  type SetInput,
} from './input.js';
export { REMINDER_BUCKETS, REMINDERS_BY_USER_INDEX, bucketOf, contestKeyOf } from './table.js';
export { isUserId, USER_ID_RULE } from './user-id.js';
