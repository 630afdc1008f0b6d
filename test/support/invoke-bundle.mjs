// Runs the bundled Lambda artifact (what `cdk deploy` uploads) once in this process, the way the
// Lambda runtime would: import the module, call `handler(event, context)`. Plain JavaScript on
// purpose: no TypeScript loader between the test and the artifact.
//
//   node test/support/invoke-bundle.mjs <bundle>/index.mjs '<event JSON>' [timeoutMs]
//
// Prints the handler's logs as they happen and, last, one line `@@RESULT {...}` (with `node`, this
// process's `process.version`: the tests check the bundles ran on the Lambda runtime's major).
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';

const [entry, eventJson, timeoutMs = '120000'] = process.argv.slice(2);
if (!entry || eventJson === undefined) {
  console.error('usage: invoke-bundle.mjs <bundle/index.mjs> <event JSON> [timeoutMs]');
  process.exit(2);
}
// CLOCK_SHIFT_MS (tests only): the invocation runs that much later (or earlier) than the machine's
// clock, as if invoked then: Date.now() and new Date() are shifted before the bundle is imported
// (timers and performance.now() are not). Lets a test run a sync at an hour and a delivery pass at
// a minute of a simulated day, each in its own process, while a lease still lasts its real seconds.
const shiftMs = Number(process.env.CLOCK_SHIFT_MS ?? '0');
if (Number.isFinite(shiftMs) && shiftMs !== 0) {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + shiftMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + shiftMs;
    }
  }
  globalThis.Date = ShiftedDate;
}

const deadline = Date.now() + Number(timeoutMs);
const context = {
  awsRequestId: randomUUID(),
  functionName: 'ContestSync-local',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:ContestSync-local',
  memoryLimitInMB: '256',
  logGroupName: '/aws/lambda/ContestSync-local',
  logStreamName: 'local',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};

// EMULATE_LAMBDA_JSON_LOGS=true: the Node.js runtime's `console` under the JSON log format (what
// ScheduledSingletonJob sets): every console line becomes a JSON object with the text in `message`,
// so an EMF line printed with console.log has no top-level `_aws` and CloudWatch extracts nothing.
if (process.env.EMULATE_LAMBDA_JSON_LOGS === 'true') {
  for (const [method, level] of [
    ['log', 'INFO'],
    ['info', 'INFO'],
    ['warn', 'WARN'],
    ['error', 'ERROR'],
    ['debug', 'DEBUG'],
    ['trace', 'TRACE'],
  ]) {
    console[method] = (...args) =>
      process.stdout.write(
        `${JSON.stringify({ timestamp: new Date().toISOString(), level, requestId: context.awsRequestId, message: format(...args) })}\n`,
      );
  }
}

const { handler } = await import(pathToFileURL(entry).href);
let line;
try {
  const result = await handler(JSON.parse(eventJson), context);
  line = { ok: true, result, node: process.version };
} catch (error) {
  line = { ok: false, error: { name: error?.name, message: error?.message, summary: error?.summary }, node: process.version };
  process.exitCode = 1;
}
process.stdout.write(`\n@@RESULT ${JSON.stringify(line)}\n`);
