/**
 * The config schema: one value, a description and default on every key. The TypeScript types below
 * derive from it (`Infer`, at the end of this file), `flume.schema.json` is written from it (core/engine/schemas.ts), and ajv
 * validates configs against it (validate.ts). Change it here and nowhere else.
 */

import { DURATION_PATTERN, MAX_DURATION, MAX_DURATION_MS } from '../support/duration.js';

const NAME_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

/** A duration key's schema: `description`, then the forms a duration takes and its limit. */
function durationSchema(description: string) {
  return {
    description: `${description} Seconds as a number, or a string such as "90s", "20m", "2h"; at most ${MAX_DURATION}.`,
    anyOf: [
      { type: 'number', minimum: 0, maximum: MAX_DURATION_MS / 1000 },
      { type: 'string', pattern: DURATION_PATTERN },
    ],
  } as const;
}

const envSchema = {
  type: 'object',
  description: 'Environment variables the step or agent is given, beside the clean base.',
  additionalProperties: { type: 'string' },
  default: {},
} as const;

const readyStepSchema = {
  type: 'object',
  description: 'One readying step, run in the place with a clean environment.',
  properties: {
    name: { type: 'string', description: 'A label for status and errors; defaults to the command.' },
    run: {
      description:
        'The command: an argv array (run directly), or a string (run by `sh -c`, as the repository wrote it).',
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', items: { type: 'string' }, minItems: 1 },
      ],
    },
    env: envSchema,
    timeout: durationSchema('Longest the step may run; default 30m.'),
  },
  required: ['run'],
  additionalProperties: false,
} as const;

const limitsSchema = {
  type: 'object',
  description: 'Limits on a stage.',
  properties: {
    stuckAfter: durationSchema('How long a stage may stay quiet, with no deliverable and no word of need, before it is reported stuck. Default 20m.'),
    fixRounds: {
      type: 'integer',
      minimum: 0,
      description: 'How many times a verify report with `Verdict: fix` sends the place back to code. Default 2.',
    },
    promptTimeout: durationSchema('How long flume waits for a sent prompt to appear in the transcript before sending it once more. Default 20s.'),
    startTimeout: durationSchema('How long flume waits for an agent to accept input before leaving its start unknown. Default 60s.'),
    tokens: {
      type: 'integer',
      minimum: 1,
      description: 'A token budget for one run of the stage: input, output, cache-read and cache-write tokens summed, as its agent\'s record counts them. Past it the stage is reported over budget and waits for the operator (or its agent is stopped, with the kind\'s `onBudget: \'stop\'`). Default: none.',
    },
  },
  additionalProperties: false,
} as const;

const deliverableSchema = {
  description: 'What ends the stage: a deliverable type (`commit`, `openspec-change`, `openspec-tasks`, `report`, `conclusion`, `landing`, or one a plugin registers), optionally with options.',
  anyOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'object',
      properties: {
        type: { type: 'string', minLength: 1, description: 'The deliverable type.' },
        path: { type: 'string', description: 'A file the deliverable is read from, relative to the place.' },
      },
      required: ['type'],
      additionalProperties: true,
    },
  ],
} as const;

const stageSchema = {
  type: 'object',
  description: 'One stage: its prompt, what ends it, and how its agent runs.',
  properties: {
    name: { type: 'string', pattern: NAME_PATTERN, description: 'The stage name, unique in its kind.' },
    prompt: {
      type: 'string',
      description: 'The prompt template. Filled in when the stage starts: `{brief}` the launch\'s brief, `{place}` the place\'s folder (its worktree), `{branch}` its branch, `{name}` the launch\'s name, `{kind}` and `{stage}` the kind\'s and the stage\'s names, `{target}` the branch the work lands on, `{previous}` what the stage before delivered (empty in the first stage), `{deliverable}` the type of the stage\'s deliverable, `{ready}` a note when readying the place failed (empty otherwise), and the variables the stage\'s deliverable reader declares (the OpenSpec readers\' `{change}`). Any other `{word}` is left as written.',
    },
    deliverable: deliverableSchema,
    fixPrompt: {
      type: 'string',
      description: 'The prompt when the next stage\'s report says `Verdict: fix` and sends the place back to this stage; that run ends on a new commit. Same placeholders as `prompt`.',
    },
    agent: { type: 'string', description: 'The agent driver key; default the config\'s `agent.driver`.' },
    model: { type: 'string', description: 'The model the agent runs with.' },
    permissionMode: {
      enum: ['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions'],
      description: 'The agent\'s permission mode.',
    },
    appendSystemPrompt: { type: 'string', description: 'Text appended to the agent\'s system prompt.' },
    limits: limitsSchema,
    advance: {
      enum: ['flume', 'caller'],
      description: 'Who goes on after this stage delivers: `flume` (the default) starts what comes next; `caller` makes the stage a gate: the place waits until `flume next` (or `flume stage`, `flume retry`, `flume drop`).',
    },
  },
  required: ['name', 'prompt', 'deliverable'],
  additionalProperties: false,
} as const;

const kindSchema = {
  type: 'object',
  description: 'A kind: an ordered list of stages.',
  properties: {
    name: { type: 'string', pattern: NAME_PATTERN, description: 'The kind\'s name; leads its places\' folders and branches.' },
    description: { type: 'string', description: 'One line on what the kind is for.' },
    branch: {
      type: 'string',
      pattern: '\\{name\\}',
      description: 'The branch pattern; `{name}` is the launch\'s name. Default `<kind>/{name}`.',
    },
    whenNotReady: {
      enum: ['start', 'refuse'],
      description: 'When readying fails: `start` the agent all the same, its prompt naming the failed step, or `refuse` the stage until retry finds the place ready. Default `refuse`.',
    },
    stages: { type: 'array', items: stageSchema, minItems: 1, description: 'The stages, in order.' },
    limits: { ...limitsSchema, description: 'Limits on each of the kind\'s stages, under a stage\'s own and over the config\'s.' },
    advance: {
      enum: ['flume', 'caller'],
      description: 'Who starts the kind\'s stages: `flume` (the default) starts the first at launch and each next one as the one before delivers; `caller` starts none by itself: its caller starts each stage (`flume stage`, `flume next`), and after each delivery the place waits for it.',
    },
    onBudget: {
      enum: ['wait', 'stop'],
      description: 'When a stage passes `limits.tokens`: `wait` reports it over budget and leaves its agent to the operator; `stop` stops the agent and the stage waits, saying why. Default `wait`.',
    },
  },
  required: ['name', 'stages'],
  additionalProperties: false,
} as const;

/** The whole config schema: `flume.config.ts` at a repository's root. */
export const configSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://flume.dev/flume.schema.json',
  title: 'flume config',
  type: 'object',
  description: 'A repository\'s flume config: its plugins, kinds, readying, target and limits.',
  properties: {
    plugins: {
      type: 'array',
      description: 'Plugins to load, each a module specifier (resolved from the repository root), a module and the options its exported function is handed (`["./x.ts", { … }]`), or a plugin object `{ name, apply }`.',
      items: {
        description: 'A module path (from the repository root), a module and its options `["./x.ts", { …options }]`, or a plugin object `{ name, apply }`.',
        anyOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', items: [{ type: 'string', minLength: 1 }, { type: 'object' }], minItems: 2, maxItems: 2 },
          { type: 'object' },
        ],
      },
      default: [],
    },
    kinds: { type: 'array', items: kindSchema, description: 'Kinds the repository declares beside the built-ins.', default: [] },
    ready: {
      type: 'object',
      description: 'What a fresh worktree needs: the toolchain steps, then the setup steps.',
      properties: {
        toolchain: { type: 'array', items: readyStepSchema, default: [], description: 'Toolchain steps, run first.' },
        setup: { type: 'array', items: readyStepSchema, default: [], description: 'Setup steps, run after the toolchain.' },
      },
      additionalProperties: false,
    },
    target: { type: 'string', minLength: 1, description: 'The branch work lands on. Default: the branch the main checkout is on.' },
    worktreeTool: {
      enum: ['git', 'worktrunk'],
      description: 'The tool that removes a place: `worktrunk` runs `wt remove` so its hooks run; default `git`.',
    },
    limits: limitsSchema,
    agent: {
      type: 'object',
      description: 'Which agent runs stages, and where.',
      properties: {
        driver: { type: 'string', minLength: 1, description: 'The default agent driver key. Default: the preset\'s (`claude-code` with the built-ins).' },
        host: {
          type: 'string',
          minLength: 1,
          description: 'Where agents run: `auto`, or the key of a pane host a plugin provides (the built-ins: `herdr`, `tmux`, `printed`). `auto` picks the available host of the highest priority: herdr when it runs, else tmux, else a printed command. Default `auto`.',
        },
        container: {
          type: 'object',
          description: 'Run each place\'s agents in a container of its own, made by this engine from this image (docs/containers.md). `flume launch --container IMAGE` asks it for one launch.',
          properties: {
            engine: { enum: ['podman', 'docker'], description: 'The engine, by its command. Default `podman` where it is installed, else `docker`.' },
            image: { type: 'string', minLength: 1, description: 'The image, already on this machine (flume never pulls one).' },
            mounts: {
              type: 'array',
              items: { type: 'string', pattern: '^/', minLength: 2 },
              description: 'Folders of this machine mounted at the same path inside (`/path`, or `/path:ro` read-only), besides the place\'s worktree, its own repository, the repository\'s objects (read-only) and the agent\'s home.',
            },
            env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Variables the agent is given inside (its credentials among them: nothing else of this machine\'s environment goes in but the locale and TERM).' },
            network: {
              description: 'What the agent reaches (docs/containers.md, "The network"). `{ allow: [\'host:port\', …] }`: only those, through flume\'s proxy (a bare host is port 443); `none`: nothing; any other word: the engine\'s network of that name (`--network`; the engine\'s own networks reach this machine\'s services). Default `{ allow: [what the kind\'s agents must reach] }` (Claude Code: its ANTHROPIC_BASE_URL, else api.anthropic.com:443).',
              oneOf: [
                { type: 'string', minLength: 1 },
                {
                  type: 'object',
                  properties: { allow: { type: 'array', items: { type: 'string', pattern: '^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$' } } },
                  required: ['allow'],
                  additionalProperties: false,
                },
              ],
            },
          },
          required: ['image'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    agents: {
      type: 'object',
      description: 'Per-driver options, keyed by driver. The options below are common; a driver checks its own against its `optionsSchema` when the repository opens.',
      additionalProperties: {
        type: 'object',
        properties: {
          binary: { type: 'string', description: 'The program to run. Default: the driver\'s own (`claude`).' },
          args: { type: 'array', items: { type: 'string' }, description: 'Extra arguments after flume\'s own.' },
          env: envSchema,
          configDir: { type: 'string', description: 'The agent\'s config folder (CLAUDE_CONFIG_DIR for Claude Code; for Codex, the home whose login each agent\'s own CODEX_HOME links to).' },
          model: { type: 'string', description: 'Codex: the model (a stage\'s `model` wins).' },
          provider: {
            type: 'object',
            description: 'Codex: a model provider (`[model_providers.<name>]` of Codex\'s config): `base_url`, `env_key` (the variable holding the API key), `wire_api` (default `responses`), and any other key Codex reads there.',
            properties: {
              name: { type: 'string', minLength: 1 },
              base_url: { type: 'string', minLength: 1 },
              env_key: { type: 'string', minLength: 1 },
              wire_api: { type: 'string', minLength: 1 },
            },
            required: ['base_url'],
            additionalProperties: { type: ['string', 'number', 'boolean'] },
          },
        },
        additionalProperties: true,
      },
    },
    pricing: {
      type: 'object',
      description: 'Prices by model id as the agent records it (`claude-sonnet-4-5`; a key also prices the id with a date suffix, `claude-sonnet-4-5-20250929`), in US dollars per million tokens. Status shows a cost only for usage whose every model is priced here (or whose agent recorded its own cost).',
      additionalProperties: {
        type: 'object',
        properties: {
          input: { type: 'number', minimum: 0, description: 'Per million input tokens not read from or written to the cache.' },
          output: { type: 'number', minimum: 0, description: 'Per million output tokens.' },
          cacheRead: { type: 'number', minimum: 0, description: 'Per million input tokens read from the prompt cache.' },
          cacheWrite: { type: 'number', minimum: 0, description: 'Per million input tokens written to the prompt cache.' },
        },
        required: ['input', 'output', 'cacheRead', 'cacheWrite'],
        additionalProperties: false,
      },
    },
    prompts: {
      type: 'object',
      description: 'Prompt templates that override a built-in stage\'s, keyed `<kind>.<stage>` or `<stage>` (`<kind>.<stage>.fix` for a fix round\'s). The same placeholders as a stage\'s `prompt`: `{brief}`, `{place}`, `{branch}`, `{name}`, `{kind}`, `{stage}`, `{target}`, `{previous}`, `{deliverable}`, `{ready}` and the reader\'s own.',
      additionalProperties: { type: 'string' },
    },
  },
  additionalProperties: false,
} as const;

/** A kind: its name and stages. */
export type KindDef = Infer<typeof kindSchema>;
/** A stage of a kind. */
export type StageDef = Infer<typeof stageSchema>;
/** A readying step. */
export type ReadyStep = Infer<typeof readyStepSchema>;
/** A stage's limits. */
export type Limits = Infer<typeof limitsSchema>;

/**
 * Derives a TypeScript type from a JSON schema written `as const`, for the subset flume's schemas
 * use: objects (properties, required, additionalProperties), arrays, enums, scalars, anyOf.
 * This is what keeps the config's types and its schema one source.
 */

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type Props<S> = S extends { properties: infer P } ? P : {};
type Req<S> = S extends { required: readonly (infer R)[] } ? R : never;

type InferObject<S> = Simplify<
  { -readonly [K in keyof Props<S> as K extends Req<S> ? K : never]: Infer<Props<S>[K]> } & {
    -readonly [K in keyof Props<S> as K extends Req<S> ? never : K]?: Infer<Props<S>[K]>;
  } & (S extends { additionalProperties: infer A }
      ? A extends false
        ? {}
        : A extends true
          ? Record<string, unknown>
          : Record<string, Infer<A>>
      : {})
>;

/** The TypeScript type a schema value describes. */
export type Infer<S> = S extends { anyOf: readonly (infer U)[] }
    ? Infer<U>
    : S extends { enum: readonly (infer E)[] }
      ? E
      : S extends { const: infer C }
        ? C
        : S extends { type: 'string' }
          ? string
          : S extends { type: 'integer' | 'number' }
            ? number
            : S extends { type: 'boolean' }
              ? boolean
              : S extends { type: 'array'; items: infer I }
                ? Infer<I>[]
                : S extends { type: 'object' }
                  ? InferObject<S>
                  : unknown;
