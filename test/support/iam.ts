/**
 * The IAM side of the tests that check the synthesized policy against the calls the code makes
 * (DynamoDB Local enforces no IAM): each DynamoDB request as IAM authorises it, a function role's
 * statements in the template, and whether a statement allows a call.
 */
import { ENV } from '../../lambda/contract.js';
import { synthesizedTemplate } from './tables.js';

type Attr = { S?: string; N?: string };
export interface Call {
  action: string;
  table: string;
  /** The partition key value (what `dynamodb:LeadingKeys` sees), for keyed calls. */
  key?: string;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
}

/** The partition key value of a Key or Item, native (document client) or marshalled ({S}/{N}). */
export const firstValue = (key: Record<string, unknown> | undefined): string | undefined => {
  const pk = key?.pk ?? key?.contestKey ?? key?.contestId;
  if (typeof pk === 'string' || typeof pk === 'number') return String(pk);
  const attr = pk as Attr | undefined;
  return attr?.S ?? attr?.N;
};

/** The IAM actions one request needs, as IAM authorises them (a transaction per contained action). */
export function callsOf(command: string, input: Record<string, any>): Call[] {
  const operation = command.replace(/Command$/, '');
  if (operation === 'TransactWriteItems') {
    return (input.TransactItems as Record<string, any>[]).map((item) => {
      const [kind, body] = Object.entries(item)[0] as [
        string,
        { TableName: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> },
      ];
      const action = { ConditionCheck: 'ConditionCheckItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem' }[kind];
      return { action: `dynamodb:${action}`, table: body.TableName, key: firstValue(body.Key ?? body.Item) };
    });
  }
  return [{ action: `dynamodb:${operation}`, table: input.TableName as string, key: firstValue(input.Key ?? input.Item) }];
}

export function functionStatements(): Statement[] {
  const resources = (synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties: any }> }).Resources;
  const [fn] = Object.values(resources).filter(
    (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.[ENV.coordinationTable],
  );
  return roleStatements(fn!);
}

/** Every statement of the policies attached to a function's role in the synthesized template. */
export function roleStatements(fn: { Properties?: any }): Statement[] {
  const resources = (synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties: any }> }).Resources;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

export const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** Whether `statement` allows `action` on the table with logical id `logicalId` for partition key `key`. */
export function allows(statement: Statement, action: string, logicalId: string, key: string | undefined): boolean {
  if (statement.Effect !== 'Allow' || ![statement.Action].flat().includes(action)) return false;
  const resources = [statement.Resource].flat() as { 'Fn::GetAtt'?: [string, string] }[];
  if (!resources.some((r) => r['Fn::GetAtt']?.[0] === logicalId && r['Fn::GetAtt'][1] === 'Arn')) return false;
  for (const [operator, conditions] of Object.entries(statement.Condition ?? {})) {
    const patterns = conditions['dynamodb:LeadingKeys'];
    if (patterns === undefined) continue;
    if (operator !== 'ForAllValues:StringLike' || key === undefined) return false;
    if (!patterns.some((pattern) => glob(pattern).test(key))) return false;
  }
  return true;
}
