/**
 * Links that cannot rot: every relative link and every repository path named in backticks in
 * README.md, docs/*.md and packages/scheduled-singleton/README.md exists (test/docs/links.ts says what
 * counts as a path). No DynamoDB, no synthesis: part of `npm run test:unit`.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LinkChecker, documentedFiles, headingAnchors, references } from './links.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the documentation', () => {
  const checker = new LinkChecker(root);

  it.each(documentedFiles(root))('%s: every relative link and backticked repository path exists', (file) => {
    const broken = checker
      .check(file)
      .map((reference) => `${file}:${reference.line}: ${reference.kind} ${reference.text}: ${reference.why}`);
    expect(broken).toEqual([]);
  });

  it('covers the README, every file in docs/ and the module README', () => {
    const files = documentedFiles(root);
    expect(files).toContain('README.md');
    expect(files).toContain('packages/scheduled-singleton/README.md');
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThanOrEqual(1);
  });
});

describe('what counts as a path', () => {
  const tops = new Set(['lambda', 'lib', 'test', 'docs', 'events', 'bench']);
  const texts = (markdown: string) => references(markdown, tops).map((reference) => `${reference.kind}:${reference.text}`);

  it('takes backticked words under a top-level folder, also inside commands', () => {
    expect(texts('see `lambda/text.ts`, `test/infra/` and `npx vitest run test/multiprocess`')).toEqual([
      'code:lambda/text.ts',
      'code:test/infra/',
      'code:test/multiprocess',
    ]);
  });

  it('takes a lone backticked file name with a known extension', () => {
    expect(texts('`handler.ts` (entry) and `package.json`')).toEqual(['code:handler.ts', 'code:package.json']);
  });

  it('leaves commands, keys, expressions and text alone', () => {
    const markdown = [
      '`npm run status -- --local`, `-c contestSync:logLevel=DEBUG`, `cron(0 * * * ? *)`, `run#<interval>`,',
      '`/contest-sync/<stage>/tables/*`, `{"dryRun": true}`, `lease#contest-sync`, `index.handler`, `nodejs22.x`,',
      '`https://codeforces.com/api`, `.local/dynamodb`, `a/b` and `src/x.ts` (no such top-level folder)',
    ].join('\n');
    expect(texts(markdown)).toEqual([]);
  });

  it('skips fenced code blocks and takes relative links, not URLs', () => {
    const markdown = [
      '```sh',
      'cat lambda/gone.ts',
      '```',
      '[design](docs/design.md#lease-rules), [AWS](https://aws.amazon.com), [top](#top)',
    ].join('\n');
    expect(texts(markdown)).toEqual(['link:docs/design.md#lease-rules', 'link:#top']);
  });

  it('takes a link whose text wraps onto the next line, at the line of its target', () => {
    const found = references('one\nsee [its\nREADME](lambda/README.md) and `[not](a-link.md)`', tops);
    expect(found.filter((reference) => reference.kind === 'link')).toEqual([{ kind: 'link', text: 'lambda/README.md', line: 3 }]);
  });

  it('flags what does not exist, in this repository', () => {
    const checker = new LinkChecker(root);
    const broken = (text: string) =>
      (checker as unknown as { brokenPath(file: string, text: string): string | undefined }).brokenPath('README.md', text);
    expect(broken('lambda/text.ts')).toBeDefined();
    expect(broken('lambda/sync/handler.ts')).toBeUndefined();
    expect(broken('events/<name>.json')).toBeUndefined();
    expect(broken('events/<name>.yaml')).toBeDefined();
    expect(broken('test/infra/*.test.ts')).toBeUndefined();
    expect(broken('ports.ts')).toBeUndefined();
    expect(broken('gone.ts')).toBeDefined();
  });
});

describe('heading anchors', () => {
  it('follow GitHub: lower case, punctuation dropped, spaces to dashes, repeats numbered', () => {
    const anchors = headingAnchors(
      '# A: `npm run chaos`\n## Pause and resume\n## Pause and resume\n## The construct: `ScheduledSingletonJob`',
    );
    expect([...anchors]).toEqual(['a-npm-run-chaos', 'pause-and-resume', 'pause-and-resume-1', 'the-construct-scheduledsingletonjob']);
  });

  it('include explicit anchors (<a id="…">) but not ones inside code fences', () => {
    const anchors = headingAnchors('<a id="vanished-contests"></a>\n**Vanished**\n```\n<a id="not-this"></a>\n```');
    expect([...anchors]).toEqual(['vanished-contests']);
  });
});
