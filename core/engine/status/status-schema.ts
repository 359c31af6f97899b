/**
 * The published shape of `flume status --json` (status.schema.json). Orchestrators read status by
 * this schema; tests validate real output against it.
 */

const nullableString = { type: ['string', 'null'] } as const;

/** The host a place or repository is on, in a reading of several hosts. */
const HOST_PROPERTY = { type: 'string', description: 'The host it is on, in a reading of several hosts (`status --all-hosts`, `--host A --host B`): `local` for this host, else the name `flume hosts` knows it by.' } as const;

const countsProperties = {
  input: { type: 'integer', minimum: 0, description: 'Input tokens not read from or written to the prompt cache.' },
  output: { type: 'integer', minimum: 0, description: 'Output tokens.' },
  cacheRead: { type: 'integer', minimum: 0, description: 'Input tokens read from the prompt cache.' },
  cacheWrite: { type: 'integer', minimum: 0, description: 'Input tokens written to the prompt cache.' },
} as const;

const countsSchema = { type: 'object', required: ['input', 'output', 'cacheRead', 'cacheWrite'], properties: countsProperties, additionalProperties: false } as const;

const usageProperties = {
  ...countsProperties,
  total: { type: 'integer', minimum: 0, description: 'input + output + cacheRead + cacheWrite: what `limits.tokens` is held against.' },
  replies: { type: 'integer', minimum: 0, description: 'Model replies counted, each once (Claude Code writes a reply as several lines with one message id).' },
  models: { type: 'object', additionalProperties: countsSchema, description: 'Tokens by model id, as the agent\'s record names it.' },
  cost: { type: ['number', 'null'], minimum: 0, description: 'In US dollars: from the config\'s `pricing` when it prices every model used, else the agent\'s own recorded cost; null when neither is known (never an estimate).' },
  costSource: { enum: ['pricing', 'transcript'], description: 'Where the cost comes from.' },
  costNote: { type: 'string', description: 'Why there is no cost.' },
} as const;

const usageRequired = ['input', 'output', 'cacheRead', 'cacheWrite', 'total', 'replies', 'models', 'cost'] as const;

/** The tokens of a stage run (or a place), from its agent's own record. */
const usageSchema = {
  type: 'object',
  description: 'Tokens and cost from the agent\'s own record (Claude Code: `message.usage` of each reply in its transcript, subagents included).',
  required: usageRequired,
  properties: usageProperties,
  additionalProperties: false,
} as const;

const agentSchema = {
  type: 'object',
  required: ['driver', 'host', 'sessionId', 'state'],
  properties: {
    driver: { type: 'string', description: 'The agent driver key (claude-code).' },
    host: { type: 'string', description: 'Where it runs: tmux, herdr, or printed.' },
    sessionId: { type: 'string', description: 'The session id; its transcript is named after it.' },
    version: { type: 'string', description: 'The agent program\'s version as it reported it at start (Claude Code: `2.1.332`).' },
    pane: { type: 'string', description: 'The pane on its host.' },
    state: { enum: ['not-up', 'starting', 'idle', 'working', 'asking', 'exited', 'unknown'], description: 'As the agent\'s own record says.' },
    transcript: { type: 'string', description: 'The transcript file, once found.' },
    command: { type: 'array', items: { type: 'string' }, description: 'The command to run (printed host only).' },
  },
  additionalProperties: false,
} as const;

/** One place's current stage, as status shows it (launch, retry, go-on and stage answer with it too). */
export const stageSchema = {
  type: 'object',
  required: ['name', 'index', 'of', 'state', 'startedAt', 'attempt', 'delivery', 'deliverable'],
  properties: {
    name: { type: 'string' },
    index: { type: 'integer', minimum: 0, description: 'The stage\'s index among the kind\'s stages, from 0.' },
    of: { type: 'integer', minimum: 1, description: 'How many stages the kind has.' },
    state: { enum: ['starting', 'working', 'waiting', 'stuck', 'over-budget', 'never-started', 'delivered', 'not-ready', 'done'] },
    startedAt: { type: 'string' },
    attempt: { type: 'integer', minimum: 1 },
    delivery: { enum: ['sending', 'taken', 'unknown', 'never-started'], description: 'Whether the stage\'s prompt was taken, as its transcript says.' },
    deliverable: { type: 'string', description: 'The deliverable type that ends the stage.' },
    needs: { type: 'string', description: 'What an agent that stopped short needs, in its own words.' },
    stuckSince: { type: 'string' },
    usage: usageSchema,
    overBudget: {
      type: 'object',
      required: ['tokens', 'limit'],
      description: 'The stage passed its token budget (`limits.tokens`): it waits for the operator, or its agent was stopped (the kind\'s `onBudget: \'stop\'`).',
      properties: { tokens: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1 }, stopped: { const: true } },
      additionalProperties: false,
    },
    delivered: { type: 'object', required: ['at', 'what'], properties: { at: { type: 'string' }, what: { type: 'string' } }, additionalProperties: false },
    progress: { type: 'object', required: ['done', 'total'], properties: { done: { type: 'integer' }, total: { type: 'integer' } }, additionalProperties: false },
    deliverableProblem: { type: 'string', description: 'Why the deliverable is not there though something stands in its place (a report whose verdict cannot be read), as its reader says.' },
    agent: agentSchema,
  },
  additionalProperties: false,
} as const;

/** One place as status shows it (launch --json answers with it). */
export const placeSchema = {
  type: 'object',
  required: ['id', 'kind', 'name', 'repo', 'path', 'branch', 'target', 'base', 'brief', 'createdAt', 'state', 'worktree', 'ready', 'stages', 'stage', 'landing', 'problems'],
  properties: {
    id: { type: 'string', description: '<kind>/<name>' },
    kind: { type: 'string' },
    name: { type: 'string' },
    repo: { type: 'string', description: 'The main checkout\'s root.' },
    path: { type: 'string' },
    branch: { type: 'string' },
    target: { type: 'string' },
    base: { type: 'string' },
    brief: { type: 'string' },
    createdAt: { type: 'string' },
    state: { enum: ['making', 'active', 'dropped', 'landed', 'kept', 'tidying', 'missing'] },
    worktree: {
      type: 'object',
      required: ['present', 'locked', 'head'],
      properties: { present: { type: 'boolean' }, locked: { type: 'boolean' }, head: nullableString },
      additionalProperties: false,
    },
    ready: {
      type: 'object',
      required: ['state', 'at'],
      properties: {
        state: { enum: ['none', 'ready', 'failed'] },
        at: { type: 'string' },
        failed: {
          type: 'object',
          required: ['step', 'exitCode', 'tail'],
          properties: { step: { type: 'string' }, exitCode: { type: ['integer', 'null'] }, tail: { type: 'string' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    stages: { type: 'array', items: { type: 'string' } },
    stage: { anyOf: [stageSchema, { type: 'null' }] },
    landing: {
      type: 'object',
      required: ['state'],
      properties: {
        state: { enum: ['landed', 'not-landed', 'no-commits', 'unknown'] },
        missing: { type: 'integer', minimum: 0, description: 'The branch\'s patches its target lacks, as git cherry counts them.' },
        by: {
          enum: ['patch', 'content', 'patch-and-content', 'sluice'],
          description: 'The evidence that decided: patch (a patch the target lacks), content (merging the branch into its target would add or change something, as a merge commit carrying work of its own does), patch-and-content (git found nothing either way: landed), sluice (its record of the branch).',
        },
        what: { type: 'string', description: 'The landing reader\'s words, e.g. "1 patch not on main", "merging it into main adds or changes b.txt".' },
      },
      additionalProperties: false,
    },
    dropped: { type: 'object', required: ['at'], properties: { at: { type: 'string' }, reason: { type: 'string' } }, additionalProperties: false },
    kept: {
      type: 'object',
      required: ['at', 'reason'],
      properties: { at: { type: 'string' }, reason: { type: 'string' }, branchKept: { type: 'boolean' } },
      additionalProperties: false,
    },
    finished: {
      type: 'object',
      description: 'The launch is over (every stage delivered, or a landing landed): nothing awaits or starts in it until its caller starts a stage by name (`flume stage`, `retry`).',
      required: ['at'],
      properties: { at: { type: 'string' } },
      additionalProperties: false,
    },
    awaitsStart: { const: true, description: 'Launched with --no-start: no stage starts until flume stage or flume retry.' },
    container: {
      type: 'object',
      description: 'The place\'s container, where its agents run in one (docs/containers.md): as its engine lists it now.',
      required: ['engine', 'image', 'name', 'state'],
      additionalProperties: false,
      properties: {
        engine: { type: 'string', description: 'The engine\'s command: podman or docker.' },
        image: { type: 'string' },
        name: { type: 'string', description: 'The container\'s name (flume-<kind>--<name>-<8 hex of the repository\'s git folder>), labelled flume.place=<id>.' },
        state: { type: 'string', description: 'As the engine says it (running, exited, …); `gone` when there is none of its name, `unknown` when the engine did not answer.' },
      },
    },
    awaits: { const: 'caller', description: 'The place waits for its caller: its kind\'s caller starts its stages (`advance: \'caller\'`), or a stage\'s gate holds it. Present in the same reading as the delivery it follows.' },
    awaiting: {
      type: 'object',
      description: 'Where the place waits for its caller (present with `awaits`): since when, after which stage and what it delivered (none before the first stage), and whether a gate holds it (`flume next` goes on; `flume stage` starts any stage).',
      required: ['since', 'gate'],
      properties: {
        since: { type: 'string' },
        after: { type: 'string', description: 'The stage that delivered.' },
        what: { type: 'string', description: 'What it delivered.' },
        gate: { type: 'boolean', description: 'True when one stage\'s gate holds the place; false for a kind whose caller starts every stage.' },
      },
      additionalProperties: false,
    },
    usage: {
      type: 'object',
      description: 'What the place\'s stage runs used in all, and each run\'s (ended ones first, the current one last); present once any is known.',
      required: [...usageRequired, 'complete', 'stages'],
      properties: {
        ...usageProperties,
        complete: { type: 'boolean', description: 'True when every stage run\'s figures are known; else the sum covers only those that are.' },
        stages: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'startedAt', 'usage'],
            properties: { name: { type: 'string' }, startedAt: { type: 'string' }, usage: { anyOf: [usageSchema, { type: 'null' }] } },
            additionalProperties: false,
          },
        },
      },
      additionalProperties: false,
    },
    problems: { type: 'array', items: { type: 'string' } },
    host: HOST_PROPERTY,
  },
  additionalProperties: false,
} as const;

const supervisorSchema = {
  type: 'object',
  required: ['running'],
  description: 'The host\'s supervisor (flume watch), which moves places on; present when there is any place.',
  properties: {
    running: { type: 'boolean' },
    pid: { type: 'integer' },
    lastPassAt: { type: 'string', description: 'When it last finished a pass over the host\'s places.' },
    note: { type: 'string', description: 'What its absence means (only when none runs).' },
  },
  additionalProperties: false,
} as const;

/** The schema of `flume status --json`. */
export const statusSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://flume.dev/status.schema.json',
  title: 'flume status --json',
  type: 'object',
  required: ['version', 'generatedAt', 'repositories', 'places'],
  properties: {
    version: { const: 1 },
    generatedAt: { type: 'string' },
    repositories: {
      type: 'array',
      items: {
        type: 'object',
        required: ['root', 'broken'],
        properties: {
          root: { type: 'string' },
          trust: { enum: ['trusted', 'untrusted', 'changed', 'no-config'], description: 'Whether the user trusted the repository\'s config as it is now (`flume trust`); flume runs no config that is not.' },
          error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', description: "Why the repository's config is not run: UNTRUSTED_CONFIG, BAD_CONFIG, CONFIG_HUNG, or CONFIG_LOADING (still being probed in the background; the next status reports how it loaded)." }, message: { type: 'string' }, fix: { type: 'string' } }, additionalProperties: false },
          broken: { type: 'array', items: { type: 'object', required: ['file', 'problem'], properties: { file: { type: 'string' }, problem: { type: 'string' } }, additionalProperties: false } },
          host: HOST_PROPERTY,
        },
        additionalProperties: false,
      },
    },
    places: { type: 'array', items: placeSchema },
    supervisor: supervisorSchema,
    hosts: {
      type: 'array',
      description: 'In a reading of several hosts: each host read, this one (`local`) first when it was, and how it answered. A host that did not answer is listed, never dropped.',
      items: {
        type: 'object',
        required: ['name', 'state'],
        properties: {
          name: { type: 'string' },
          target: { type: 'string', description: 'Where ssh reaches it (absent for this host).' },
          state: { enum: ['answered', 'unreachable', 'failed'], description: 'answered: its places and repositories are in the reading; unreachable: ssh did not reach its flume in time; failed: its flume answered with an error.' },
          error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, fix: { type: 'string' } }, additionalProperties: false },
          lastReadingAt: { type: 'string', description: 'When it last answered a reading (for a host that did not answer this one).' },
          supervisor: supervisorSchema,
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
