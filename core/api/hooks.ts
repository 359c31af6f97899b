/**
 * flume's lifecycle, every hook declared once. Plugins tap the lifecycle hooks (`beforeReady`,
 * `beforeTidy`) with `tapPromise(name, fn)`. The keyed families (`startAgent`, `planAgent`,
 * `confirmPrompt`, `readDeliverable`) are HookMaps the registries tap, one key per registered
 * driver or reader (core/api/plugin.ts): a plugin provides or takes over a key by registering, never
 * by tapping. Read this file to see the whole lifecycle.
 */
import { createRequire } from 'node:module';
import { FlumeError, inPlugin } from './errors.js';
import { badReturn, returnCheck, type ReturnCheck } from './hook-returns.js';
import type { PaneHost } from './pane-host.js';
import type { AgentHandle, PromptState } from './agent.js';
import type { PlaceRecord } from './record.js';
import type { ReadyStep, StageDef } from './config.js';

// Loaded with `require`: imported as an ES module, node would first scan it for its exports.
const { AsyncSeriesHook, AsyncSeriesBailHook, HookMap } = createRequire(import.meta.url)('tapable') as typeof import('tapable');

/** What `beforeReady` taps see: the place and the steps about to run, which they may add to or check. */
export interface ReadyContext {
  place: PlaceRecord;
  toolchain: ReadyStep[];
  setup: ReadyStep[];
  /** True for `launch --dry-run`: the steps are listed, not run, and the place does not exist; a tap adds or checks steps and acts on nothing. */
  dryRun?: boolean;
}

/** What `startAgent` taps get: everything needed to start one stage's agent. */
export interface StartRequest {
  place: PlaceRecord;
  stage: StageDef;
  /** The session id flume chose; the agent's transcript is named after it. */
  sessionId: string;
  /** The prompt; drivers that carry it on the command line (printed) put it there. */
  prompt: string;
  /** The key of the pane host it starts on; the host itself is handed to the driver beside the request. */
  host: string;
  /**
   * The agent's environment before the driver adds its own and the config's: what the caller's passes
   * on (less git's local variables, what git binds to one hook's run, FLUME_HOST), less the driver's
   * `sessionVariables`, with a UTF-8 locale where the caller has none (core/support/environment.ts). flume always sets it; a driver builds on it, never on `process.env`.
   */
  env?: Record<string, string>;
}

/**
 * What `planAgent` taps answer: what `startAgent` would run for the same request, checked as the
 * start checks it (its program present), with nothing started or written.
 */
export interface AgentPlan {
  /**
   * The command as the operator would run it in the place: `env`, the variables the agent gets that
   * differ from the caller's (a secret as a `NAME="$NAME"` reference, never its value), then its argv.
   */
  command: string[];
  /** The folder it runs in (the place). */
  cwd: string;
  /** The pane host it runs on: the one it was handed. */
  host: string;
  /** The agent program's version, where it reports one. */
  version?: string;
}

/** What `confirmPrompt` taps get: an agent and a text that was sent to it. */
export interface ConfirmRequest {
  handle: AgentHandle;
  text: string;
  /** Only records written at or after this time count (ISO). */
  since?: string;
}

/** What `readDeliverable` taps get: one place, read at one commit. */
export interface DeliverableRequest {
  place: PlaceRecord;
  stage: StageDef;
  /** The deliverable's options from the stage (`path`, …), type included. */
  options: { type: string; [key: string]: unknown };
  /** The branch head, read once; everything else is read at this commit. */
  head: string;
  /** A file's content at `head` (relative to the repository root), or undefined when absent. Batched. */
  file(path: string): Promise<string | undefined>;
  /** The names in a folder at `head`, or undefined when absent. Batched. */
  list(path: string): Promise<string[] | undefined>;
  /** A file in the place's working tree (not committed), or undefined. */
  workingFile(path: string): Promise<string | undefined>;
  /**
   * When a file in the place's working tree was last written (its mtime, ISO), or undefined: a file
   * written again with the same content is still a new write, which a digest cannot tell.
   */
  workingFileWritten(path: string): Promise<string | undefined>;
  /** Landing: the branch's patches missing from its target, from the reading's one `git cherry` pass. */
  unlanded(): Promise<number | undefined>;
  /**
   * Landing judged by patch and by content: `patches` as `unlanded()`, and, when no patch is missing,
   * `content` naming what merging the branch into its target would add or change (a merge commit's
   * own work, a patch the target reverted), absent when the merge adds nothing. The branch holds
   * nothing beyond its target only when both find nothing. Undefined when git cannot tell.
   */
  landing(): Promise<{ patches: number; content?: { paths: string[]; conflict: boolean } } | undefined>;
  /** The committer time (ISO) of `head`. */
  headTime: string;
  /**
   * The repository's git common dir (`<repo>/.git` for an ordinary one): where tools keep what they
   * record of the repository outside any commit (flume's own state, a lander's record of a branch).
   */
  commonDir: string;
}

/** What a deliverable reader answers. */
export interface DeliverableReading {
  present: boolean;
  /** What was delivered, in a few words: "commit 1a2b3c4", "8 of 8 tasks", "verify.md: pass". */
  what?: string;
  /** Progress to show while absent or present: a change's tasks ticked. */
  progress?: { done: number; total: number };
  /** Reader-specific facts, e.g. a report's verdict. */
  facts?: Record<string, unknown>;
  /**
   * Why it is absent though something stands in its place, in a person's words (a report whose
   * verdict line cannot be read). Status shows it beside the stage, so a stage does not stall unexplained.
   */
  problem?: string;
  /**
   * Absent, and it will not come without someone acting: what is needed, in a person's words (a
   * landing its lander refused, with the reasons). The stage stops short on it, as it does on an
   * agent that stops to say what it needs, and status shows it as the stage's `needs`.
   */
  needs?: string;
  /**
   * Files outside any commit the reading came from (a record in the git common dir), present or
   * not yet: a long-lived reader (the supervisor) reads the place afresh when one changes, and
   * watches their folders, since no ref moves when such a record does.
   */
  readFrom?: string[];
  /**
   * Present, and the work goes back to the stage before (a verify report whose verdict is `fix`):
   * the place runs that stage again with its `fixPrompt`, at most `limits.fixRounds` times.
   */
  sendBack?: boolean;
}

/** What `beforeTidy` taps get: a place tidying is about to remove. */
export interface TidyCandidate {
  place: PlaceRecord;
}

/** Creates the hooks of one flume instance. Frozen: the lifecycle has exactly these. */
export function createHooks() {
  return Object.freeze({
    /** A place was made (or a stage starts in one already made) and is about to be readied; taps may add or check steps. */
    beforeReady: track(new AsyncSeriesHook<[ReadyContext]>(['context']), 'beforeReady'),
    /**
     * Keyed by driver: start a stage's agent on the host given; the first tap to answer returns its
     * handle. Registering a driver taps it (named after the registering plugin); a plugin intercepts a
     * start by registering a driver that wraps it (`replace`). The core calls it through
     * core/drivers/reach.ts, never directly.
     */
    startAgent: trackMap('startAgent', new HookMap(() => new AsyncSeriesBailHook<[StartRequest, PaneHost], AgentHandle | undefined>(['request', 'host']))),
    /** Keyed by driver: what startAgent would run for a request on the host (launch --dry-run), checked, nothing started or written; undefined when the tap cannot say. */
    planAgent: trackMap('planAgent', new HookMap(() => new AsyncSeriesBailHook<[StartRequest, PaneHost], AgentPlan | undefined>(['request', 'host']))),
    /** Keyed by driver: read the transcript for a sent text; answers taken / not-yet / unknown. Tapped by registering a driver. */
    confirmPrompt: trackMap('confirmPrompt', new HookMap(() => new AsyncSeriesBailHook<[ConfirmRequest], PromptState | undefined>(['request']))),
    /** Keyed by deliverable type: read at one commit; answers present (with what) or absent. Tapped by registering a reader. */
    readDeliverable: trackMap(
      'readDeliverable',
      new HookMap(() => new AsyncSeriesBailHook<[DeliverableRequest], DeliverableReading | undefined>(['request'])),
    ),
    /** A place is about to be removed; a tap returning a string vetoes, and the string is the reason it is kept. */
    beforeTidy: track(new AsyncSeriesBailHook<[TidyCandidate], string | undefined>(['candidate']), 'beforeTidy', returnCheck('beforeTidy')),
  });
}

/** The hooks of a flume instance. */
export type Hooks = ReturnType<typeof createHooks>;

/**
 * The keys of a HookMap of `createHooks` that some plugin has tapped, in the order first tapped (e.g.
 * every deliverable type a reader provides). A HookMap made elsewhere has none.
 */
export function tappedKeys(map: object): string[] {
  return [...(TAPPED.get(map) ?? [])];
}

/**
 * Calls a hook. An error from a tap of flume's hooks already names its plugin and hook (each tap is
 * wrapped when it registers: see `guard`), whatever other calls run at the same time; an error from
 * a hook made elsewhere is named here, after its one tap when it has one.
 * `hookName` is the lifecycle name (with the key for a HookMap: `readDeliverable(commit)`).
 */
export async function callHook<T, A extends unknown[]>(hookName: string, hook: { promise(...args: A): Promise<T> }, ...args: A): Promise<T> {
  try {
    return await hook.promise(...args);
  } catch (error) {
    if (error instanceof FlumeError && error.plugin) throw error;
    const taps = (hook as Partial<Interceptable>).taps ?? [];
    throw inPlugin(error, taps.length === 1 ? taps[0].name : 'unknown plugin', hookName);
  }
}

/** The keys tapped in each HookMap, kept here: tapable exposes no iterator over a map's hooks. */
const TAPPED = new WeakMap<object, Set<string>>();

type TapFn = (...args: unknown[]) => unknown;
interface Tap {
  name: string;
  type: 'sync' | 'async' | 'promise';
  fn: TapFn;
}
interface Interceptable {
  taps: Tap[];
  intercept(interceptor: { register?: (tap: Tap) => Tap }): void;
}

/** Wraps every tap of `hook` as it registers, so its errors and its return are its own (`guard`). */
function track<H>(hook: H, name: string, check?: ReturnCheck, onTap?: () => void): H {
  (hook as unknown as Interceptable).intercept({
    register: (tap) => {
      onTap?.();
      return { ...tap, fn: guard(tap, name, check) };
    },
  });
  return hook;
}

function trackMap<H>(family: string, map: InstanceType<typeof HookMap<H>>): InstanceType<typeof HookMap<H>> {
  const keys = new Set<string>();
  TAPPED.set(map, keys);
  map.intercept({ factory: (key, hook) => track(hook, `${family}(${String(key)})`, returnCheck(family, String(key)), () => keys.add(String(key))) });
  return map;
}

/**
 * A tap's function wrapped in the knowledge of its own name: a throw or a rejection becomes an error
 * naming the plugin (`inPlugin`), and a malformed return a PLUGIN_BAD_RETURN naming it. One mutable
 * "tap running now" per hook would blame whichever tap of an overlapping call ran last.
 */
function guard(tap: Tap, hook: string, check: ReturnCheck | undefined): TapFn {
  const { fn, name } = tap;
  const blame = (error: unknown) => inPlugin(error, name, hook);
  const judged = (value: unknown) => {
    const problems = check && value !== undefined ? check(value) : undefined;
    if (problems?.length) throw badReturn(name, hook, problems, value);
    return value;
  };
  switch (tap.type) {
    case 'promise':
      return (...args) => {
        let answer: unknown;
        try {
          answer = fn(...args);
        } catch (error) {
          return Promise.reject(blame(error));
        }
        return Promise.resolve(answer).then(judged, (error) => Promise.reject(blame(error)));
      };
    case 'async':
      return (...args) => {
        const callback = args.pop() as (error: unknown, value?: unknown) => void;
        let called = false;
        const answer = (error: unknown, value?: unknown) => {
          called = true;
          if (error) return callback(blame(error));
          let checked: unknown;
          try {
            checked = judged(value);
          } catch (bad) {
            return callback(bad);
          }
          return callback(null, checked);
        };
        try {
          fn(...args, answer);
        } catch (error) {
          // A throw after the answer came from further on (the next tap), not from this one.
          if (called) throw error;
          callback(blame(error));
        }
      };
    default:
      return (...args) => {
        let answer: unknown;
        try {
          answer = fn(...args);
        } catch (error) {
          throw blame(error);
        }
        return judged(answer);
      };
  }
}
