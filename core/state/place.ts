/**
 * A place's names: its id `<kind>/<name>`, its folder `<repo>/places/<kind>--<name>` and its branch.
 * Names are checked here, before anything is made, so a bad one changes nothing.
 */
import { join } from 'node:path';
import { flumeError } from '../api/errors.js';
import type { KindDef } from '../api/config.js';

/** The folder under a repository root that holds its places. */
export const PLACES_DIR = 'places';

// Lowercase kebab only: a name is a folder on case-insensitive file systems too, and a change's
// name is its OpenSpec change id, which OpenSpec allows only in this form.
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_NAME = 64;

/** Throws BAD_NAME unless `name` is a safe branch and folder name. */
export function checkName(name: string): void {
  if (name.length <= MAX_NAME && NAME.test(name)) return;
  throw flumeError('BAD_NAME', { name: JSON.stringify(name) }, {
    details: { name },
  });
}

/** The place's id: `<kind>/<name>`. */
export function placeId(kind: string, name: string): string {
  return `${kind}/${name}`;
}

/** The place's file-safe key: `<kind>--<name>` (kind names hold no `--`). */
export function placeKey(kind: string, name: string): string {
  return `${kind}--${name}`;
}

/** The place's folder. */
export function placePath(root: string, kind: string, name: string): string {
  return join(root, PLACES_DIR, placeKey(kind, name));
}

/** The place's branch, from the kind's pattern (default `<kind>/{name}`). */
export function placeBranch(kind: Pick<KindDef, 'name' | 'branch'>, name: string): string {
  return (kind.branch ?? `${kind.name}/{name}`).split('{name}').join(name);
}

/**
 * Reads what a caller named a place by: `kind/name`, `kind--name`, or the place's folder path.
 * Returns kind and name, or undefined when it names no place's form.
 */
export function parsePlaceRef(ref: string): { kind: string; name: string } | undefined {
  const base = ref.replace(/\/+$/, '').split('/').pop() ?? '';
  const byKey = /^([a-z0-9]+(?:-[a-z0-9]+)*)--(.+)$/.exec(ref.includes('/places/') || !ref.includes('/') ? base : '');
  if (byKey) return { kind: byKey[1], name: byKey[2] };
  const byId = /^([a-z0-9]+(?:-[a-z0-9]+)*)\/([^/]+)$/.exec(ref);
  if (byId) return { kind: byId[1], name: byId[2] };
  return undefined;
}

/**
 * A name made from a brief, for callers that give none (/launch, herdr's launch key): its first few
 * words, lowercase, joined by "-". The caller did not choose it, so a taken one gets a suffix.
 */
export function nameFromBrief(brief: string): string {
  const words = brief.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9\s-]/g, ' ').split(/[\s-]+/).filter(Boolean);
  let name = '';
  for (const word of words.slice(0, 6)) {
    const next = name ? `${name}-${word}` : word;
    if (next.length > 40) break;
    name = next;
  }
  return name || 'work';
}
