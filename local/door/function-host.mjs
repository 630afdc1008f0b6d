// One warm Lambda container for a bundled function (what `cdk deploy` uploads), in a child
// process: imports the bundle once, then answers each invocation the parent sends over IPC,
// `{ id, event }` -> `{ id, ok, result | error }`. Plain JavaScript on purpose: no TypeScript
// loader between the artifact and its invocations (as test/support/invoke-bundle.mjs).
//
//   fork('local/door/function-host.mjs', ['<bundle>/index.mjs', '<function name>'])
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const [entry, functionName = 'local'] = process.argv.slice(2);
const { handler } = await import(pathToFileURL(entry).href);
const TIMEOUT_MS = 30_000;

const contextOf = () => {
  const deadline = Date.now() + TIMEOUT_MS;
  return {
    awsRequestId: randomUUID(),
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
};

process.on('message', async ({ id, event }) => {
  try {
    process.send({ id, ok: true, result: await handler(event, contextOf()) });
  } catch (error) {
    process.send({ id, ok: false, error: { name: error?.name, message: error?.message } });
  }
});
process.send({ ready: true });
