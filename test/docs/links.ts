/**
 * Links that cannot rot: finds, in a Markdown file, every relative link and every repository path
 * named in backticks, and says which of them do not exist (test/docs/links.test.ts runs it over
 * README.md, docs/*.md and the module's README).
 *
 * - A relative link `[text](target)` must name an existing file or folder (relative to the file);
 *   a `#fragment` must name a heading of the target (GitHub's heading anchors).
 * - A backticked span is a path when it looks like one, so that commands, keys and code are not:
 *   a word that starts with a top-level folder of the repository followed by `/`
 *   (`lambda/events.ts`, `test/infra/`, also inside a command such as `npx vitest run test/multiprocess`),
 *   or a whole span that is one file name with a known extension (`handler.ts`, `package.json`),
 *   which must exist beside the Markdown file or somewhere in the repository. `*` and `<name>`
 *   are wildcards: at least one file must match.
 * Fenced code blocks are skipped: they hold commands and output, not references.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

export interface Reference {
  /** `link` for `[text](target)`, `code` for a backticked path. */
  kind: 'link' | 'code';
  /** As written. */
  text: string;
  line: number;
}

export interface Broken extends Reference {
  file: string;
  /** The repository path the reference resolves to (without a fragment). */
  path: string;
  why: string;
}

/** Folders and files no reference should point into: generated, installed or git-ignored. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'cdk.out', '.local', '.tmp', 'coverage', '.cdk.staging']);

/** File extensions that make a lone backticked word a file name. */
const FILE_EXTENSION = /^[\w.@-]+\.(?:ts|mts|cts|js|mjs|cjs|json|md|ya?ml|sh|txt|jar)$/;

/**
 * File names the docs mention that are not in the repository by design (build output). Add a
 * file a documented command writes here when the prose names it.
 */
export const PRODUCED_FILES = new Set([
  'index.mjs', // the function bundle esbuild writes into cdk.out
]);

/** Every file and folder of the repository, relative to `root`, folders ending in `/`. */
export function repositoryEntries(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('cdk.out')) return [];
      const path = join(dir, entry.name);
      const rel = relative(root, path);
      return entry.isDirectory() ? [`${rel}/`, ...walk(path)] : [rel];
    });
  return walk(root);
}

/** The text without fenced code blocks (their lines kept empty, so line numbers stay right). */
function withoutFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker === fence) fence = undefined;
      return '';
    }
    return line;
  });
}

/**
 * GitHub's anchors for the headings of a Markdown text (`## Pause and resume` -> `pause-and-resume`),
 * and the explicit ones (`<a id="vanished-contests"></a>`).
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    for (const explicit of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(explicit[1]!.toLowerCase());
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links and backticked paths of a Markdown text. */
export function references(markdown: string, topLevelDirs: ReadonlySet<string>): Reference[] {
  const found: Reference[] = [];
  withoutFences(markdown).forEach((line, index) => {
    const lineNumber = index + 1;
    // Code spans first, so that a link-like text inside backticks is not read as a link.
    const spans = [...line.matchAll(/(`+)(.+?)\1/g)];
    for (const span of spans) {
      const content = span[2]!.trim();
      const words = content.split(/\s+/);
      if (words.length === 1 && FILE_EXTENSION.test(content)) {
        found.push({ kind: 'code', text: content, line: lineNumber });
        continue;
      }
      for (const word of words) {
        const path = word.replace(/[),;:.'"]+$/, '').replace(/^['"(]+/, '');
        const top = /^([\w.-]+)\//.exec(path)?.[1];
        if (top !== undefined && topLevelDirs.has(top) && !path.includes('://')) found.push({ kind: 'code', text: path, line: lineNumber });
      }
    }
  });
  // Links after the code spans, over the whole text: a link's text may wrap onto the next line.
  const prose = withoutFences(markdown)
    .map((line) => line.replace(/(`+)(.+?)\1/g, ''))
    .join('\n');
  for (const link of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = link[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const lineNumber = prose.slice(0, link.index + link[0].lastIndexOf('](')).split('\n').length;
    found.push({ kind: 'link', text: target, line: lineNumber });
  }
  return found;
}

/** A glob-ish path (`*`, `<name>`) as a regular expression over repository paths. */
function pattern(path: string): RegExp {
  const parts = path.split(/(\*\*|\*|<[^>]+>)/).map((part) => {
    if (part === '**') return '.*';
    if (part === '*' || /^<[^>]+>$/.test(part)) return '[^/]+';
    return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}$`);
}

export class LinkChecker {
  private readonly entries: string[];
  private readonly entrySet: Set<string>;
  readonly topLevelDirs: Set<string>;
  private readonly anchors = new Map<string, Set<string>>();

  constructor(private readonly root: string) {
    this.entries = repositoryEntries(root);
    this.entrySet = new Set(this.entries);
    this.topLevelDirs = new Set(
      this.entries.filter((entry) => /^[^/]+\/$/.test(entry) && !entry.startsWith('.')).map((entry) => entry.slice(0, -1)),
    );
  }

  /** The references of one Markdown file (path relative to the root) that do not resolve. */
  check(file: string): Broken[] {
    const markdown = readFileSync(join(this.root, file), 'utf8');
    return references(markdown, this.topLevelDirs).flatMap((reference) => {
      const why = reference.kind === 'link' ? this.brokenLink(file, reference.text) : this.brokenPath(file, reference.text);
      return why === undefined ? [] : [{ ...reference, file, path: this.resolved(file, reference), why }];
    });
  }

  private resolved(file: string, reference: Reference): string {
    const path = reference.text.replace(/#.*$/, '');
    if (reference.kind === 'code') return path;
    return path === '' ? file : relative(this.root, resolve(this.root, dirname(file), decodeURIComponent(path)));
  }

  private exists(path: string): boolean {
    return this.entrySet.has(path) || this.entrySet.has(`${path.replace(/\/$/, '')}/`);
  }

  private brokenLink(file: string, target: string): string | undefined {
    const fragment = target.includes('#') ? target.slice(target.indexOf('#') + 1) : undefined;
    const path = this.resolved(file, { kind: 'link', text: target, line: 0 });
    if (path.startsWith('..')) return 'points outside the repository';
    if (!this.exists(path)) return 'no such file or folder';
    if (fragment !== undefined && fragment !== '' && path.endsWith('.md')) {
      if (!this.anchorsOf(path).has(fragment.toLowerCase())) return `no heading #${fragment} in ${path}`;
    }
    return undefined;
  }

  private brokenPath(file: string, text: string): string | undefined {
    const path = text.replace(/#.*$/, '').replace(/:\d+(?::\d+)?$/, '');
    if (!path.includes('/')) {
      if (PRODUCED_FILES.has(path)) return undefined;
      const beside = relative(this.root, resolve(this.root, dirname(file), path));
      if (this.exists(beside)) return undefined;
      return this.entries.some((entry) => basename(entry) === path) ? undefined : 'no file of that name in the repository';
    }
    if (/[*<]/.test(path)) {
      const regex = pattern(path.replace(/\/$/, ''));
      return this.entries.some((entry) => regex.test(entry.replace(/\/$/, ''))) ? undefined : 'matches no file';
    }
    return this.exists(path) ? undefined : 'no such file or folder';
  }

  private anchorsOf(path: string): Set<string> {
    let anchors = this.anchors.get(path);
    if (anchors === undefined) {
      anchors = headingAnchors(readFileSync(join(this.root, path), 'utf8'));
      this.anchors.set(path, anchors);
    }
    return anchors;
  }
}

/** The Markdown files the check covers: README.md, docs/*.md and the module's README. */
export function documentedFiles(root: string): string[] {
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs'))
        .filter((name) => name.endsWith('.md') && statSync(join(root, 'docs', name)).isFile())
        .map((name) => `docs/${name}`)
    : [];
  return ['README.md', ...docs.sort(), 'packages/scheduled-singleton/README.md'];
}
