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
