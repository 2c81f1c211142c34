import type { OpenAPIV3 } from 'openapi-types';
import type { OperationInfo, SchemaObject, SpecIndex } from '../../../src/http/spec';

/**
 * Where a parameter travels and how the server turns its text into a value:
 * - body `raw`: the text as is; `json`: JSON text, always; `json-or-raw`: JSON
 *   when it parses (src/http/spec.ts decodingFor);
 * - `query`: a query parameter the validator coerces from text (integer,
 *   boolean); `query-json`: a query parameter declared with JSON content;
 * - `path`: a path segment.
 */
export type Decoding = 'raw' | 'json' | 'json-or-raw' | 'query' | 'query-json' | 'path';

export interface Field {
  name: string;
  in: 'path' | 'query' | 'body';
  schema: SchemaObject;
  required: boolean;
  decoding: Decoding;
}

export interface OpModel {
  info: OperationInfo;
  id: string;
  method: string;
  template: string;
  path: Field[];
  /** Query parameters and body fields. */
  params: Field[];
  authenticated: boolean;
  hasBody: boolean;
  /** Every method the contract defines on this path (any other gets 405). */
  pathMethods: string[];
}

/** The operations of the dereferenced contract, with their parameters and how each is sent. */
export function operationModels(spec: SpecIndex): OpModel[] {
  const methodsByPath = new Map<string, string[]>();
  for (const o of spec.operations)
    methodsByPath.set(o.pathTemplate, [...(methodsByPath.get(o.pathTemplate) ?? []), o.method.toUpperCase()]);
  return spec.operations.map((info) => {
    const item = spec.document.paths[info.pathTemplate] as OpenAPIV3.PathItemObject;
    const declared = [...(item.parameters ?? []), ...(info.op.parameters ?? [])] as OpenAPIV3.ParameterObject[];
    const path: Field[] = [];
    const params: Field[] = [];
    for (const p of declared) {
      const jsonContent = p.content?.['application/json']?.schema as SchemaObject | undefined;
      const schema = normalize((jsonContent ?? p.schema ?? {}) as SchemaObject);
      if (p.in === 'path') path.push({ name: p.name, in: 'path', schema, required: true, decoding: 'path' });
      else if (p.in === 'query')
        params.push({ name: p.name, in: 'query', schema, required: !!p.required, decoding: jsonContent ? 'query-json' : 'query' });
    }
    const content = (info.op.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content;
    const media = content?.['application/x-www-form-urlencoded'] ?? content?.['multipart/form-data'];
    const body = media?.schema as SchemaObject | undefined;
    for (const [name, prop] of Object.entries(body?.properties ?? {})) {
      const decoding = info.bodyFields.get(name) ?? 'raw';
      params.push({ name, in: 'body', schema: normalize(prop as SchemaObject), required: (body?.required ?? []).includes(name), decoding });
    }
    // The server decides JSON-ness from the schema alone; upload fields are files, not text.
    return {
      info,
      id: info.operationId,
      method: info.method.toUpperCase(),
      template: info.pathTemplate,
      path,
      params: params.filter((f) => f.schema.format !== 'binary'),
      authenticated: info.authenticated,
      hasBody: !!media,
      pathMethods: methodsByPath.get(info.pathTemplate)!,
    };
  });
}

/** `allOf: [X]` (how the contract adds a default or a description to a $ref) folded into one schema, recursively. */
export function normalize(s: SchemaObject): SchemaObject {
  let out: SchemaObject = { ...s };
  if (out.allOf && out.allOf.length === 1) {
    const { allOf, ...rest } = out;
    out = { ...normalize(allOf[0] as SchemaObject), ...rest };
  }
  if (out.anyOf) out.anyOf = out.anyOf.map((b) => normalize(b as SchemaObject));
  if (out.oneOf) out.oneOf = out.oneOf.map((b) => normalize(b as SchemaObject));
  if (out.type === 'array' && out.items) out = { ...out, items: normalize(out.items as SchemaObject) };
  if (out.properties)
    out = { ...out, properties: Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, normalize(v as SchemaObject)])) };
  return out;
}

export type JsonType = 'integer' | 'number' | 'string' | 'boolean' | 'array' | 'object' | 'null';

/** The JSON types a schema admits; null when it admits anything. `number` admits integers too. */
export function admittedTypes(s: SchemaObject): Set<JsonType> | null {
  const branches = s.anyOf ?? s.oneOf;
  let out: Set<JsonType>;
  if (branches) {
    out = new Set();
    for (const b of branches) {
      const t = admittedTypes(b as SchemaObject);
      if (t === null) return null;
      for (const x of t) out.add(x);
    }
  } else if (s.type) {
    out = new Set([s.type as JsonType]);
  } else if (s.enum) {
    out = new Set(
      s.enum.map((v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v) as JsonType),
    );
  } else {
    return null;
  }
  if (out.has('number')) out.add('integer');
  if (s.nullable) out.add('null');
  return out;
}
