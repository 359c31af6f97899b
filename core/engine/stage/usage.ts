/**
 * What each stage cost: the tokens its agent's own record counts (the driver's optional `usage`),
 * summed by model, priced only where a price is known, and checked against `limits.tokens`. The
 * driver reads its record incrementally from a cursor flume keeps per agent session in
 * `<common>/flume/usage/<session id>.json` (atomic writes; the last figures with it), so status
 * and the supervisor read only what a transcript gained since they last asked.
 */
import { keptCache } from '../../support/kept.js';
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Flume } from '../../api/plugin.js';
import { reachDriver } from '../../drivers/reach.js';
import type { AgentHandle, AgentUsage, TokenCounts } from '../../api/agent.js';
import type { FlumeConfig } from '../../api/plugin.js';
import type { KindDef, StageDef } from '../../api/config.js';
import { privateDir, PRIVATE_FILE_MODE } from '../../state/private.js';

/** The usage of a stage or a place as status reports it. */
export interface UsageView extends TokenCounts {
  /** input + output + cacheRead + cacheWrite: what `limits.tokens` is held against. */
  total: number;
  /** Model replies counted, each once. */
  replies: number;
  /** Tokens by model. */
  models: Record<string, TokenCounts>;
  /** In US dollars; null when no price is known for every model used (costNote says why). */
  cost: number | null;
  /** Where the cost comes from: the config's `pricing` table, or the agent's own record. */
  costSource?: 'pricing' | 'transcript';
  /** Why there is no cost. */
  costNote?: string;
}

/** Prices of one model, US dollars per million tokens (Anthropic's list unit). */
export type ModelPrice = NonNullable<FlumeConfig['pricing']>[string];

/**
 * The usage of an agent so far, read from its record from where the last reading stopped; undefined
 * when its driver reports none or it has no record yet. A record that vanished keeps its last figures.
 */
export async function agentUsage(flume: Flume, commonDir: string, handle: AgentHandle): Promise<AgentUsage | undefined> {
  const driver = reachDriver(flume, handle.driver);
  if (!driver?.hasUsage) return undefined;
  const file = cacheFile(commonDir, handle.sessionId);
  // A cursor this process wrote or read is a valid place to go on from, even if another process has
  // since stored a later one (reading on from an earlier cursor reads more, never counts twice): a
  // process that asks again and again (the supervisor answering status) reads no cache file.
  const cached = KEPT.get(file) ?? (await readFile(file, 'utf8').then((text) => JSON.parse(text) as Cached, () => undefined));
  const read = await driver.usage(handle, cached?.driver === handle.driver ? cached.cursor : undefined).catch(() => undefined);
  if (!read) return cached?.usage;
  // The driver handed the cursor back as it was: nothing was read, nothing to store.
  if (cached && read.cursor === cached.cursor && KEPT.get(file) === cached) return read.usage;
  const next: Cached = { driver: handle.driver, usage: read.usage, cursor: read.cursor };
  if (JSON.stringify(next) !== JSON.stringify(cached)) await writeCache(commonDir, file, next).catch(() => undefined);
  KEPT.set(file, next);
  return read.usage;
}

/** Tokens of every model summed. */
export function totalCounts(usage: AgentUsage): TokenCounts {
  const sum = zero();
  for (const counts of Object.values(usage.models)) addCounts(sum, counts);
  return sum;
}

/** The number `limits.tokens` is held against: every token read or written, cached or not. */
export function tokensOf(counts: TokenCounts): number {
  return counts.input + counts.output + counts.cacheRead + counts.cacheWrite;
}

/** Several usages as one (a place's stages); a recorded cost survives only where each has one. */
export function sumUsage(usages: AgentUsage[]): AgentUsage {
  const models: Record<string, TokenCounts> = {};
  let replies = 0;
  let recorded: number | undefined = 0;
  for (const usage of usages) {
    replies += usage.replies;
    for (const [model, counts] of Object.entries(usage.models)) addCounts((models[model] ??= zero()), counts);
    recorded = recorded !== undefined && usage.recordedCost?.currency === 'USD' ? recorded + usage.recordedCost.amount : undefined;
  }
  return { models, replies, ...(recorded !== undefined && usages.length > 0 ? { recordedCost: { amount: recorded, currency: 'USD' } } : {}) };
}

/**
 * A usage as status shows it, with its cost: from the config's price table when it prices every
 * model used, else the agent's own recorded cost, else none (and why). Never an estimate.
 */
export function usageView(usage: AgentUsage, pricing: FlumeConfig['pricing'] = {}): UsageView {
  const counts = totalCounts(usage);
  const view: UsageView = { ...counts, total: tokensOf(counts), replies: usage.replies, models: usage.models, cost: null };
  const used = Object.entries(usage.models).filter(([, c]) => tokensOf(c) > 0);
  const unpriced = used.filter(([model]) => !priceOf(pricing, model)).map(([model]) => model);
  if (unpriced.length === 0) {
    view.cost = round(used.reduce((sum, [model, c]) => sum + priced(c, priceOf(pricing, model)!), 0));
    view.costSource = 'pricing';
  } else if (usage.recordedCost?.currency === 'USD') {
    view.cost = round(usage.recordedCost.amount);
    view.costSource = 'transcript';
  } else {
    view.costNote = `no price for ${unpriced.join(', ')} in the config's pricing table, and the agent's record states no cost for all of it`;
  }
  return view;
}

/**
 * A model's price: the table's entry for its exact id, or for the id less a date suffix
 * (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`). Any other model has no price.
 */
export function priceOf(pricing: FlumeConfig['pricing'] = {}, model: string): ModelPrice | undefined {
  return pricing[model] ?? pricing[model.replace(/-\d{8}$/, '')];
}

/** The token budget of a stage and what happens past it: the stage's limits, then its kind's, then the config's. */
export function budgetOf(config: FlumeConfig, kind: KindDef | undefined, stage: StageDef | undefined): { tokens?: number; onBudget: 'wait' | 'stop' } {
  const tokens = stage?.limits?.tokens ?? kind?.limits?.tokens ?? config.limits?.tokens;
  return { ...(tokens !== undefined ? { tokens } : {}), onBudget: kind?.onBudget ?? 'wait' };
}

/** A short figure for people: `12.3k`, `4.5M`. */
export function short(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trim(n / 1000)}k`;
  return `${trim(n / 1_000_000)}M`;
}

/** One line on a usage: tokens by kind, models, cost. */
export function describeUsage(view: UsageView): string {
  const models = Object.keys(view.models).join(', ');
  const cost = view.cost !== null ? `, $${view.cost.toFixed(view.cost < 1 ? 4 : 2)}` : ', cost unknown';
  return `${short(view.total)} tokens (${short(view.input)} in, ${short(view.output)} out, ${short(view.cacheRead)} cache read, ${short(view.cacheWrite)} cache write${models ? `; ${models}` : ''})${cost}`;
}

/** What is kept per agent session: the driver's cursor and the figures it last gave. */
interface Cached {
  driver: string;
  usage: AgentUsage;
  cursor: unknown;
}

/** The last cursor of each session this process read or wrote, by cache file. */
const KEPT = keptCache<string, Cached>('usage cursors', { holds: "the last usage figures and cursor of each agent session this process read or wrote, by its cache file", entries: 1000 });

function cacheFile(commonDir: string, sessionId: string): string {
  return join(commonDir, 'flume', 'usage', `${sessionId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
}

async function writeCache(commonDir: string, file: string, cached: Cached): Promise<void> {
  await privateDir(join(commonDir, 'flume'));
  await privateDir(join(commonDir, 'flume', 'usage'));
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify(cached), { mode: PRIVATE_FILE_MODE });
  await rename(temp, file);
}

function priced(counts: TokenCounts, price: ModelPrice): number {
  return (counts.input * price.input + counts.output * price.output + counts.cacheRead * price.cacheRead + counts.cacheWrite * price.cacheWrite) / 1_000_000;
}

/** Float noise off (12 significant digits), nothing a price could hold. */
function round(amount: number): number {
  return Number(amount.toPrecision(12));
}

function trim(n: number): string {
  return n >= 100 ? String(Math.round(n)) : n.toFixed(1).replace(/\.0$/, '');
}

function zero(): TokenCounts {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

function addCounts(into: TokenCounts, plus: TokenCounts): void {
  into.input += plus.input;
  into.output += plus.output;
  into.cacheRead += plus.cacheRead;
  into.cacheWrite += plus.cacheWrite;
}
