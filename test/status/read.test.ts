/** `npm run status -- --stack NAME`: the Coordination table's name from the stack outputs (CloudFormation mocked). */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { COORDINATION_OUTPUT, StatusError, coordinationTableOfStack } from '../../cli/status/read.js';

const cfn = mockClient(CloudFormationClient);
// The class's send, mocked for this file only: the unit files after it in its worker get it back.
afterAll(() => cfn.restore());
afterEach(() => cfn.reset());

const stack = (outputs: { OutputKey: string; OutputValue: string }[]) => ({
  Stacks: [{ StackName: 'ContestSync', StackStatus: 'UPDATE_COMPLETE' as const, CreationTime: new Date(), Outputs: outputs }],
});

describe('coordinationTableOfStack', () => {
  it('reads the CoordinationTableName output of the named stack', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'ContestSync-prod' }).resolves(
      stack([
        { OutputKey: 'ContestsTableName', OutputValue: 'ContestSync-prod-Contests1' },
        { OutputKey: COORDINATION_OUTPUT, OutputValue: 'ContestSync-prod-Coordination9' },
      ]),
    );
    await expect(coordinationTableOfStack(new CloudFormationClient({ region: 'us-east-1' }), 'ContestSync-prod')).resolves.toBe(
      'ContestSync-prod-Coordination9',
    );
    expect(cfn.commandCalls(DescribeStacksCommand)).toHaveLength(1);
  });

  it('says so when the stack has no such output', async () => {
    cfn.on(DescribeStacksCommand).resolves(stack([{ OutputKey: 'Other', OutputValue: 'x' }]));
    const read = coordinationTableOfStack(new CloudFormationClient({ region: 'us-east-1' }), 'Other');
    await expect(read).rejects.toThrow(StatusError);
    await expect(coordinationTableOfStack(new CloudFormationClient({ region: 'us-east-1' }), 'Other')).rejects.toThrow(
      /stack Other \(UPDATE_COMPLETE\) has no CoordinationTableName output/,
    );
  });

  it('passes on why the stack could not be described', async () => {
    cfn.on(DescribeStacksCommand).rejects(new Error('Stack with id Nope does not exist'));
    await expect(coordinationTableOfStack(new CloudFormationClient({ region: 'us-east-1' }), 'Nope')).rejects.toThrow(
      /could not describe stack Nope: Stack with id Nope does not exist/,
    );
  });
});
