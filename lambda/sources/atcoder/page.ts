/**
 * The contests page's markup as rows of text (parse5, the WHATWG HTML parser browsers follow): the
 * sections `#contest-table-upcoming`, `#contest-table-action` (running) and `#contest-table-recent`,
 * each a `<table>` whose `<tbody>` rows have four cells — start (`<time>`), name (a link
 * `/contests/<id>`), duration, rated range. `#contest-table-permanent` (never-ending practice
 * contests, no schedule) is not read. What the texts mean is schema.ts's and source.ts's. Pure.
 */
import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

export const TABLE_IDS = {
  upcoming: 'contest-table-upcoming',
  action: 'contest-table-action',
  recent: 'contest-table-recent',
} as const;

export type TableName = keyof typeof TABLE_IDS;

/** One `<tr>` of a section's table body, as text. */
export interface PageRow {
  /** How many `<td>` the row has (four on today's page). */
  cells: number;
  time?: string;
  href?: string;
  name?: string;
  duration?: string;
  rated?: string;
}

/** Each section's rows; undefined: the page has no such section with a table body. */
export type PageTables = Partial<Record<TableName, PageRow[]>>;

const isElement = (node: Node): node is Element => 'tagName' in node;

function childElements(node: Element, tagName: string): Element[] {
  return node.childNodes.filter((child): child is Element => isElement(child) && child.tagName === tagName);
}

/** Descendants in document order, without recursion (hostile nesting cannot overflow the stack). */
function* descendants(root: Node): Generator<Element> {
  const stack: Node[] = 'childNodes' in root ? [...root.childNodes].reverse() : [];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!isElement(node)) continue;
    yield node;
    const children = node.tagName === 'template' ? [] : node.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
  }
}

function first(root: Node, tagName: string): Element | undefined {
  for (const element of descendants(root)) if (element.tagName === tagName) return element;
  return undefined;
}

/** The text a browser shows (whitespace runs collapsed, trimmed). */
export function textOf(root: Node): string {
  const parts: string[] = [];
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.nodeName === '#text' && 'value' in node) parts.push(node.value);
    if ('childNodes' in node) for (let i = node.childNodes.length - 1; i >= 0; i -= 1) stack.push(node.childNodes[i]!);
  }
  return parts.join('').replace(/\s+/g, ' ').trim();
}

const attribute = (element: Element, name: string): string | undefined => element.attrs.find((a) => a.name === name)?.value;

function pageRow(tr: Element): PageRow {
  const cells = childElements(tr, 'td');
  const [start, title, duration, rated] = cells;
  const time = start === undefined ? undefined : first(start, 'time');
  const link =
    title === undefined ? undefined : [...descendants(title)].find((e) => e.tagName === 'a' && attribute(e, 'href') !== undefined);
  return {
    cells: cells.length,
    ...(time === undefined ? {} : { time: textOf(time) }),
    ...(link === undefined ? {} : { href: attribute(link, 'href')!, name: textOf(link) }),
    ...(duration === undefined ? {} : { duration: textOf(duration) }),
    ...(rated === undefined ? {} : { rated: textOf(rated) }),
  };
}

/** The rows of a section's first table body, or undefined when it has none. */
function sectionRows(section: Element): PageRow[] | undefined {
  const table = first(section, 'table');
  const tbody = table === undefined ? undefined : childElements(table, 'tbody')[0];
  return tbody === undefined ? undefined : childElements(tbody, 'tr').map(pageRow);
}

/** The page's sections by id (the first element with each id, as `getElementById` finds it). */
export function readPage(html: string): PageTables {
  const wanted = new Map<string, TableName>(Object.entries(TABLE_IDS).map(([name, id]) => [id, name as TableName]));
  const tables: PageTables = {};
  for (const element of descendants(parse(html))) {
    const name = wanted.get(attribute(element, 'id') ?? '');
    if (name === undefined) continue;
    wanted.delete(attribute(element, 'id')!);
    const rows = sectionRows(element);
    if (rows !== undefined) tables[name] = rows;
    if (wanted.size === 0) break;
  }
  return tables;
}
