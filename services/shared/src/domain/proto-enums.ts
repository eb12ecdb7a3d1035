// Proto enums and the API's names for them, converted in one way everywhere: the proto value is the
// prefix plus the upper-cased name (JOB_STATUS_SUCCEEDED ⇄ succeeded, POLICY_STATUS_ACTIVE ⇄ active).
// Each vocabulary is declared once, as an `as const` array beside what it names (jobs.ts,
// policies.ts, webhooks.ts), and the type, the converter and the OpenAPI enums are made from it.

export interface ProtoEnum<Name extends string, Proto extends string> {
  /** The API names, in their documented order. */
  readonly names: readonly Name[];
  is(value: string): value is Name;
  toProto(name: Name): Proto;
  /** undefined for UNSPECIFIED and for values this build does not know. */
  fromProto(value: string | number): Name | undefined;
}

export function protoEnum<Name extends string, Proto extends string>(prefix: string, names: readonly Name[]): ProtoEnum<Name, Proto> {
  const is = (value: string): value is Name => (names as readonly string[]).includes(value);
  return {
    names,
    is,
    toProto: (name) => `${prefix}${name.toUpperCase()}` as Proto,
    fromProto: (value) => {
      if (typeof value !== 'string' || !value.startsWith(prefix)) return undefined;
      const name = value.slice(prefix.length).toLowerCase();
      return is(name) ? name : undefined;
    },
  };
}
