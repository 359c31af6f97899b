/**
 * What a usage costs: priced from the config's table (US dollars per million tokens) only where the
 * table prices every model used, else the agent's own recorded cost, else no cost and why.
 */
import { describe, expect, it } from 'vitest';
import { budgetOf, sumUsage, usageView } from '../../../core/engine/stage/usage.js';
import type { AgentUsage } from '../../../core/api/agent.js';

const sonnet = { input: 1_000_000, output: 200_000, cacheRead: 4_000_000, cacheWrite: 100_000 };
const haiku = { input: 10_000, output: 1_000, cacheRead: 0, cacheWrite: 0 };
const pricing = {
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
};

describe('usageView', () => {
  it('prices each model from the table, per million tokens', () => {
    const view = usageView({ models: { 'claude-sonnet-4-5': sonnet, 'claude-haiku-4-5': haiku }, replies: 7 }, pricing);
    // 3 + 3 + 1.2 + 0.375 for sonnet, 0.01 + 0.005 for haiku
    expect(view.cost).toBeCloseTo(7.59, 9);
    expect(view).toMatchObject({ costSource: 'pricing', replies: 7, input: 1_010_000, output: 201_000, cacheRead: 4_000_000, cacheWrite: 100_000, total: 5_311_000 });
    expect(view.costNote).toBeUndefined();
  });

  it('prices a dated model id by its undated key, and no other near name', () => {
    expect(usageView({ models: { 'claude-sonnet-4-5-20250929': haiku }, replies: 1 }, pricing).cost).toBeCloseTo(0.045, 9);
    expect(usageView({ models: { 'claude-sonnet-4': haiku }, replies: 1 }, pricing).cost).toBeNull();
  });

  it('gives no cost when a model used is not in the table, and says which', () => {
    const view = usageView({ models: { 'claude-sonnet-4-5': sonnet, 'claude-opus-5-5': haiku }, replies: 2 }, pricing);
    expect(view.cost).toBeNull();
    expect(view.costSource).toBeUndefined();
    expect(view.costNote).toContain('claude-opus-5-5');
    expect(usageView({ models: { 'claude-sonnet-4-5': sonnet }, replies: 1 }).cost).toBeNull();
  });

  it("falls back on the agent's own recorded cost, never on a guess", () => {
    const recorded: AgentUsage = { models: { 'claude-opus-5-5': haiku }, replies: 1, recordedCost: { amount: 0.0008, currency: 'USD' } };
    expect(usageView(recorded, pricing)).toMatchObject({ cost: 0.0008, costSource: 'transcript' });
    // The table, where it prices every model, is the operator's word and wins.
    expect(usageView(recorded, { 'claude-opus-5-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } })).toMatchObject({ cost: 0.075, costSource: 'pricing' });
  });

  it('sums stages, a recorded cost only where every stage has one', () => {
    const a: AgentUsage = { models: { m: haiku }, replies: 1, recordedCost: { amount: 1, currency: 'USD' } };
    const b: AgentUsage = { models: { m: haiku, n: sonnet }, replies: 2, recordedCost: { amount: 2, currency: 'USD' } };
    expect(sumUsage([a, b])).toEqual({ models: { m: { input: 20_000, output: 2_000, cacheRead: 0, cacheWrite: 0 }, n: sonnet }, replies: 3, recordedCost: { amount: 3, currency: 'USD' } });
    expect(sumUsage([a, { ...b, recordedCost: undefined }]).recordedCost).toBeUndefined();
  });
});

describe('budgetOf', () => {
  it("takes the stage's limit, then its kind's, then the config's; onBudget from the kind", () => {
    const stage = { name: 's', prompt: 'p', deliverable: 'commit', limits: { tokens: 10 } };
    const kind = { name: 'k', stages: [stage], limits: { tokens: 20 }, onBudget: 'stop' as const };
    const config = { limits: { tokens: 30 } };
    expect(budgetOf(config, kind, stage)).toEqual({ tokens: 10, onBudget: 'stop' });
    expect(budgetOf(config, kind, { ...stage, limits: {} })).toEqual({ tokens: 20, onBudget: 'stop' });
    expect(budgetOf(config, { name: 'k', stages: [stage] }, { ...stage, limits: {} })).toEqual({ tokens: 30, onBudget: 'wait' });
    expect(budgetOf({}, undefined, undefined)).toEqual({ onBudget: 'wait' });
  });
});
