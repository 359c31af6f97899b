/**
 * JSON Schema checks for plugins that read what another tool writes (a record a lander keeps of a
 * branch, checked by the schema flume publishes for it). ajv is loaded on the first check, so a command
 * that reads no such record never pays for it; `date-time` is the one format known.
 */

/** A compiled schema: the problems of a value, one line each (`/state must be equal to one of the allowed values`); none when it fits. */
export type SchemaCheck = (value: unknown) => Promise<string[]>;

/** Compiles `schema` (draft-07) on the first check and keeps it. */
export function schemaCheck(schema: Record<string, unknown>): SchemaCheck {
  let compiled: Promise<Validate> | undefined;
  return async (value) => {
    compiled ??= import('ajv').then(({ default: Ajv }) => {
      const ajv = new (Ajv as unknown as typeof Ajv.default)({ allErrors: true, formats: { 'date-time': isDateTime } });
      return ajv.compile(schema) as Validate;
    });
    const validate = await compiled;
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || '(the value)'} ${error.message ?? 'is not allowed'}`);
  };
}

type Validate = ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };

/** RFC 3339's date-time, as JSON Schema's `date-time` format means it. */
function isDateTime(value: string): boolean {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(value) && !Number.isNaN(Date.parse(value));
}
