/**
 * The command line of every script a person runs (`npm start`, `npm run status`, `redrive`,
 * `bench`, `simulate`, `chaos`): node:util's parseArgs with the script's options, `--help` printing
 * its usage, and every mistake answered by one line that says what to do, then the usage, exit 2.
 * It imports nothing heavy, so that a script can answer before it loads the product.
 *
 * npm takes the flags before `--` for itself (`npm start --offline` sets its own config
 * `offline`, and the script never sees the flag); npm passes them on as `npm_config_<name>`. A
 * script's option found there and not on its own command line is refused with the command that
 * works (`use npm start -- --offline`), when npm ran the script (`npm_lifecycle_event`): a script
 * started another way, by a test under `npm test` say, inherits npm's settings but not its flags.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandLine<O extends Options> {
  /** How a person runs it: `npm start`, `npm run bench`. */
  command: string;
  /** The package.json script that runs it (`start`, `bench`): only then can npm have kept a flag. */
  npmScript: string;
  /** What follows the command in the usage line: `[-- --offline] [--port N]`. */
  synopsis: string;
  /** One line per option (or a note), shown under the usage. */
  help: readonly string[];
  options: O;
}

/** A mistake on the command line: its message is the one line a person reads. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The usage, as `--help` prints it. */
export function usage(line: Pick<CommandLine<Options>, 'command' | 'synopsis' | 'help'>): string {
  return [`usage: ${line.command} ${line.synopsis}`, ...line.help.map((text) => `  ${text}`)].join('\n');
}

/** Prints `<command>: <message>` and the usage on stderr and exits 2. */
export function refuse(line: Pick<CommandLine<Options>, 'command' | 'synopsis' | 'help'>, message: string): never {
  process.stderr.write(`${line.command}: ${message}\n${usage(line)}\n`);
  process.exit(2);
}

/**
 * The parsed options. `--help` (or `-h`) prints the usage and exits 0; a mistake (unknown
 * option, missing value, an argument the script takes none of, a flag npm kept) is refused.
 */
export function parseCommandLine<O extends Options>(
  line: CommandLine<O>,
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): ReturnType<typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } } }>>['values'] {
  const options = { ...line.options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } };
  let parsed: { values: Record<string, unknown>; tokens: { kind: string; name?: string }[] };
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: false, strict: true, tokens: true });
  } catch (error) {
    refuse(line, mistake(error, Object.keys(options)));
  }
  const { values, tokens } = parsed;
  if (values.help === true) {
    process.stdout.write(`${usage(line)}\n`);
    process.exit(0);
  }
  const given = new Set(tokens.flatMap((token) => (token.kind === 'option' && token.name !== undefined ? [token.name] : [])));
  const kept = env.npm_lifecycle_event === line.npmScript ? keptByNpm(Object.keys(line.options), given, env) : undefined;
  if (kept !== undefined) refuse(line, `npm took ${kept} for itself and did not pass it on: use ${line.command} -- ${kept}`);
  return values as never;
}

/** parseArgs' error as one line that names the flag and, for a near miss, the option meant. */
function mistake(error: unknown, known: readonly string[]): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? /'([^']+)'/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const near = nearest(flag.replace(/^-+/, '').split('=')[0] ?? '', known);
    return `unknown option ${flag}${near !== undefined ? ` (did you mean --${near}?)` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = /'(--?[\w-]+)/.exec(message)?.[1] ?? flag;
    return message.includes('does not take') ? `${name} takes no value` : `${name} needs a value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument ${flag} (every option starts with --)`;
  return message.split('\n')[0] ?? message;
}

/** The known option within two edits of `name`, if exactly one is nearest. */
function nearest(name: string, known: readonly string[]): string | undefined {
  const scored = known.map((option) => ({ option, d: distance(name, option) })).filter((s) => s.d <= 2);
  const best = Math.min(...scored.map((s) => s.d));
  const ties = scored.filter((s) => s.d === best);
  return ties.length === 1 ? ties[0]!.option : undefined;
}

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The first of the script's options that npm kept for itself: npm sets `npm_config_<name>` (`-`
 * as `_`) to `true` or the value for `--name`, to an empty string for `--no-name`, and turns
 * `--verbose` into `npm_config_loglevel=verbose`. One given to the script too is not kept.
 */
export function keptByNpm(names: readonly string[], given: ReadonlySet<string>, env: NodeJS.ProcessEnv): string | undefined {
  for (const name of names) {
    if (given.has(name)) continue;
    const negated = name.startsWith('no-');
    const key = `npm_config_${(negated ? name.slice(3) : name).replaceAll('-', '_')}`;
    const set = env[key];
    if (negated ? set === '' : set !== undefined && set !== '') return `--${name}`;
    if (name === 'verbose' && env.npm_config_loglevel === 'verbose') return '--verbose';
  }
  return undefined;
}

/** A whole-number option's value (`fallback` when not given), refused unless within `min`..`max`. */
export function wholeNumber(
  line: Pick<CommandLine<Options>, 'command' | 'synopsis' | 'help'>,
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) {
    refuse(line, `--${name} takes a whole number ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got ${raw}`);
  }
  return n;
}
