/**
 * The published shape of `flume launch --dry-run --json` (launch-dry-run.schema.json), written from
 * here by `npm run schema`; tests validate real output against the published file.
 */

const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

const readyStepSchema = {
  type: 'object',
  required: ['label', 'argv', 'cwd', 'env', 'hidden', 'timeoutMs'],
  properties: {
    label: { type: 'string', description: 'The step as status names it.' },
    argv: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'What runs: the program and its arguments (a shell line as sh -c LINE).' },
    cwd: { type: 'string', description: 'Where it runs: the place.' },
    env: { ...stringMap, description: 'Its whole environment (the caller\'s PATH, HOME, USER, LANG, TERM, then what the step declares); a secret\'s value is shown as "(hidden)".' },
    hidden: { type: 'array', items: { type: 'string' }, description: 'The variables whose values are hidden.' },
    timeoutMs: { type: 'integer', minimum: 0 },
  },
  additionalProperties: false,
} as const;

const agentPlanSchema = {
  type: 'object',
  required: ['command', 'cwd', 'host'],
  properties: {
    command: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'The command as the operator would run it in the place: env with the variables that differ from the caller\'s (a secret as a NAME="$NAME" reference), then the agent\'s argv.' },
    cwd: { type: 'string' },
    host: { type: 'string' },
    version: { type: 'string', description: 'The agent program\'s version, as it reports it.' },
  },
  additionalProperties: false,
} as const;

const stageSchema = {
  type: 'object',
  required: ['name', 'index', 'deliverable', 'agent', 'prompt'],
  properties: {
    name: { type: 'string' },
    index: { type: 'integer', minimum: 0 },
    deliverable: { type: 'string', description: 'The deliverable type that ends the stage.' },
    agent: {
      type: 'object',
      required: ['driver', 'host', 'sessionId', 'plan'],
      properties: {
        driver: { type: 'string' },
        host: { type: 'string', description: 'The pane host it would run on (tmux, herdr, printed, …).' },
        sessionId: { type: 'string', description: 'An example: the launch makes the session id afresh.' },
        plan: { anyOf: [agentPlanSchema, { type: 'null' }], description: 'What the driver would run; null when the driver does not say (then its program was not checked).' },
      },
      additionalProperties: false,
    },
    prompt: { type: 'string', description: 'The whole prompt, exactly as the launch would send it (when readying passes).' },
  },
  additionalProperties: false,
} as const;

/** The schema of `flume launch --dry-run --json`. */
export const dryRunSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://flume.dev/launch-dry-run.schema.json',
  title: 'flume launch --dry-run --json',
  type: 'object',
  required: ['version', 'dryRun', 'place', 'ready', 'stage', 'supervisor', 'notes'],
  properties: {
    version: { const: 1 },
    dryRun: { const: true },
    place: {
      type: 'object',
      required: ['id', 'kind', 'name', 'repo', 'path', 'branch', 'target', 'brief', 'base'],
      properties: {
        id: { type: 'string', description: '<kind>/<name>' },
        kind: { type: 'string' },
        name: { type: 'string' },
        repo: { type: 'string' },
        path: { type: 'string', description: 'The folder the place would be made at.' },
        branch: { type: 'string' },
        target: { type: 'string', description: 'The branch its work lands on.' },
        brief: { type: 'string' },
        base: {
          type: 'object',
          required: ['from', 'commit'],
          properties: { from: { type: 'string', description: 'The revision as named.' }, commit: { type: 'string', pattern: '^[0-9a-f]{40,64}$' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    ready: {
      type: 'object',
      required: ['steps'],
      properties: {
        steps: { type: 'array', items: readyStepSchema, description: 'The steps readying would run, in order (none run in a dry run).' },
        failed: { type: 'object', required: ['step', 'message'], properties: { step: { type: 'string' }, message: { type: 'string' } }, additionalProperties: false },
      },
      additionalProperties: false,
    },
    stage: { anyOf: [stageSchema, { type: 'null' }], description: 'The first stage as it would start; null when none would (--no-start, or readying refused).' },
    supervisor: {
      type: 'object',
      required: ['starts', 'running'],
      properties: { starts: { type: 'boolean', description: 'The launch would start the host\'s supervisor.' }, running: { type: 'boolean' } },
      additionalProperties: false,
    },
    notes: { type: 'array', items: { type: 'string' } },
  },
  additionalProperties: false,
} as const;
