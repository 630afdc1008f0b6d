/**
 * Lists the product's long functions, longest first: `npm run functions` (those over 50 lines),
 * `npm run functions -- --over 30` (another threshold). test/scripts/long-functions.test.ts keeps
 * the budget (docs/testing.md).
 *
 * Every function with a body counts: declarations, methods, constructors, accessors, arrow
 * functions and function expressions, named after what they are assigned to (`const f = () =>`,
 * `f: () =>`, `this.f = function`, a class field); an unnamed one after the call it is passed to
 * (`<callback of app.get>`) or the function that returns it (`<returned by createHandler>`). A
 * function's length is the lines from its first line (the comments before it excluded) to its
 * closing line, blank and comment lines included; a function nested in another counts in both.
 * The product's source is lambda/, lib/, packages/<name>/src/, local/, bin/, cli/ and examples/:
 * TypeScript files, tests and declaration files excluded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The threshold the list and the budget speak of: a function over this many lines is long. */
export const LONG_FUNCTION_LINES = 50;

/** The folders of the product's source, from the repository's root (packages/<name>/src/ too). */
export const PRODUCT_FOLDERS = ['lambda', 'lib', 'local', 'bin', 'cli', 'examples'] as const;

export interface FunctionLength {
  /** The file, as given (relative to the repository's root when listed by `measureProduct`). */
  file: string;
  /** 1-based line of the function's first line. */
  line: number;
  /** `name`, `Class.method`, `Class.constructor`, `object.method`, `<callback of f>`, `<returned by f>`. */
  name: string;
  /** Lines from the first line to the closing line, both included. */
  lines: number;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

function isFunctionWithBody(node: ts.Node): node is FunctionNode {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)) &&
    node.body !== undefined
  );
}

/** The source text of a property name or a bindable expression (`a.b.c`), short. */
function nameText(node: ts.Node, source: ts.SourceFile): string {
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteral(node) || ts.isNumericLiteral(node)) return node.text;
  const text = node.getText(source).replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The name of the class or object literal a member belongs to, if it has one. */
function ownerName(container: ts.Node, source: ts.SourceFile): string | undefined {
  if (ts.isClassDeclaration(container) || ts.isClassExpression(container)) {
    if (container.name !== undefined) return container.name.text;
    return ts.isClassExpression(container) ? assignedName(container, source) : 'default';
  }
  if (ts.isObjectLiteralExpression(container)) return assignedName(container, source);
  return undefined;
}

const qualified = (owner: string | undefined, member: string): string => (owner === undefined ? member : `${owner}.${member}`);

function isTransparent(parent: ts.Node, child: ts.Node): boolean {
  if (
    ts.isParenthesizedExpression(parent) ||
    ts.isAsExpression(parent) ||
    ts.isSatisfiesExpression(parent) ||
    ts.isNonNullExpression(parent)
  ) {
    return true;
  }
  if (ts.isConditionalExpression(parent)) return parent.condition !== child;
  const defaults = [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken];
  return ts.isBinaryExpression(parent) && parent.right === child && defaults.includes(parent.operatorToken.kind);
}

/** The name an expression (a function, a class, an object literal) is bound to, if any. */
function assignedName(node: ts.Node, source: ts.SourceFile): string | undefined {
  let expression: ts.Node = node;
  // Through what does not change what is bound: parentheses, `as`, `satisfies`, `!`, a default
  // (`a ?? (() => …)`) or either branch of a condition.
  while (isTransparent(expression.parent, expression)) expression = expression.parent;
  const parent = expression.parent;
  if (ts.isVariableDeclaration(parent) && parent.initializer === expression) return nameText(parent.name, source);
  if (ts.isPropertyAssignment(parent) && parent.initializer === expression)
    return qualified(ownerName(parent.parent, source), nameText(parent.name, source));
  if (ts.isPropertyDeclaration(parent) && parent.initializer === expression)
    return qualified(ownerName(parent.parent, source), nameText(parent.name, source));
  if (ts.isBinaryExpression(parent) && parent.right === expression && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return nameText(parent.left, source);
  }
  if (ts.isExportAssignment(parent)) return 'default';
  return undefined;
}

function functionName(node: FunctionNode, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return qualified(ownerName(node.parent, source), 'constructor');
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
    const accessor = ts.isGetAccessorDeclaration(node) ? 'get ' : ts.isSetAccessorDeclaration(node) ? 'set ' : '';
    return `${accessor}${qualified(ownerName(node.parent, source), nameText(node.name, source))}`;
  }
  if (ts.isFunctionDeclaration(node)) return node.name?.text ?? 'default';
  const bound = assignedName(node, source);
  if (bound !== undefined) return bound;
  if (ts.isFunctionExpression(node) && node.name !== undefined) return node.name.text;
  const parent = node.parent;
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) return `<callback of ${calleeName(parent.expression, source)}>`;
  if (ts.isReturnStatement(parent) || (ts.isArrowFunction(parent) && parent.body === node)) {
    const outer = ts.findAncestor(parent, isFunctionWithBody);
    if (outer !== undefined) return `<returned by ${functionName(outer, source)}>`;
  }
  return '<anonymous>';
}

/** `f`, `a.b.f`, or `….f` when what the method is called on is not a plain name. */
function calleeName(callee: ts.Expression, source: ts.SourceFile): string {
  const plain = (e: ts.Expression): boolean =>
    ts.isIdentifier(e) || e.kind === ts.SyntaxKind.ThisKeyword || (ts.isPropertyAccessExpression(e) && plain(e.expression));
  if (plain(callee)) return callee.getText(source);
  return ts.isPropertyAccessExpression(callee) ? `….${callee.name.text}` : '…';
}

/** Every function with a body in one file's text, in source order. */
export function measureFunctions(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node): void => {
    if (isFunctionWithBody(node)) {
      const start = lineOf(node.getStart(source));
      found.push({ file, line: start, name: functionName(node, source), lines: lineOf(node.end) - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const isProductSource = (name: string): boolean =>
  /\.(m|c)?tsx?$/.test(name) && !/\.d\.(m|c)?ts$/.test(name) && !/\.(test|spec)\.(m|c)?tsx?$/.test(name);

function filesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // a folder the tree no longer has
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : filesUnder(path);
    return entry.isFile() && isProductSource(entry.name) ? [path] : [];
  });
}

/** The product's TypeScript files under `root`, relative to it, sorted. */
export function productSourceFiles(root: string): string[] {
  let packages: string[] = [];
  try {
    packages = readdirSync(join(root, 'packages'));
  } catch {
    // no workspace packages
  }
  const folders = [...PRODUCT_FOLDERS, ...packages.map((name) => join('packages', name, 'src'))];
  return folders
    .flatMap((folder) => filesUnder(join(root, folder)))
    .map((path) => relative(root, path))
    .sort();
}

/** Every function of the product's source under `root`, longest first (then by file and line). */
export function measureProduct(root: string): FunctionLength[] {
  return productSourceFiles(root)
    .flatMap((file) => measureFunctions(file, readFileSync(join(root, file), 'utf8')))
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

/** The listing `npm run functions` prints: `all` measured in `files` files. */
export function formatLongFunctions(all: readonly FunctionLength[], files: number, over: number): string {
  const long = all.filter((f) => f.lines > over);
  const width = Math.max(0, ...long.map((f) => `${f.file}:${f.line}`.length));
  const rows = long.map((f) => `${String(f.lines).padStart(5)}  ${`${f.file}:${f.line}`.padEnd(width)}  ${f.name}`);
  return [
    `${long.length} of ${all.length} functions in ${files} files are over ${over} lines; the longest has ${Math.max(0, ...all.map((f) => f.lines))}.`,
    ...(rows.length > 0 ? [`lines  ${'where'.padEnd(width)}  function`, ...rows] : []),
  ].join('\n');
}

function main(argv: readonly string[]): void {
  const at = argv.indexOf('--over');
  const over = at === -1 ? LONG_FUNCTION_LINES : Number(argv[at + 1]);
  if (!Number.isInteger(over) || over < 0) throw new Error('usage: npm run functions [-- --over <lines>]');
  const root = fileURLToPath(new URL('..', import.meta.url));
  console.log(formatLongFunctions(measureProduct(root), productSourceFiles(root).length, over));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
