// The client's types, named from the generated OpenAPI types (schema.d.ts).
import type { components, paths } from "./schema.d.ts";

type Ctx = "/api/v1/contexts/{slug}/";
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { "application/json": infer T } } } } ? T : never;
type Body<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { requestBody?: { content: { "application/json": infer T } } } ? T : never;

type Query<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { parameters: { query?: infer Q } } ? Q : never;
type C<Rest extends string> = `/api/v1/contexts/{slug}/${Rest}` & keyof paths;

export type Schemas = components["schemas"];

/** The code of an API error answer (the schema's ErrorCodeEnum), or one of the client's own:
 * `unexpected_response` for an answer that is not the API's error shape, `context_required`
 * when no `context` was given and the token sees several contexts, or none. */
export type ErrorCode = Schemas["ErrorCodeEnum"] | "unexpected_response" | "context_required";

export declare class MorphzError extends Error {
  constructor(status: number, code: ErrorCode, message: string, details: unknown[]);
  status: number;
  code: ErrorCode;
  details: unknown[];
}
export declare class MorphzTransportError extends Error {}

export declare class MorphzClient {
  constructor(
    baseUrl: string,
    token: string,
    /** Without `context`, the one context the token sees, asked by the first request. */
    options?: { context?: string; retries?: number; retryWaitMs?: number; fetch?: typeof fetch },
  );
  /** The context's slug; undefined until the first request finds it when none was given. */
  slug: string | undefined;
  /** The context's slug: the one given, else the token's one context (400 `context_required`
   * when it sees several, or none). */
  contextSlug(): Promise<string>;
  request(method: string, path: string, init?: { query?: Record<string, unknown>; body?: unknown }): Promise<any>;
  index(): Promise<Json<"/api/v1/", "get", 200>>;
  contexts(): Promise<Json<"/api/v1/contexts/", "get", 200>>;
  context(): Promise<Json<Ctx, "get", 200>>;
  /** Unfreezing, and `screening`, take an admin-scope token (403 `scope_insufficient`). */
  updateContext(body: Body<Ctx, "patch">): Promise<Json<Ctx, "patch", 200>>;
  appendEvent(event: Body<"/api/v1/contexts/{slug}/events/", "post">): Promise<Json<"/api/v1/contexts/{slug}/events/", "post", 201>>;
  events(query?: Record<string, unknown>): Promise<Json<"/api/v1/contexts/{slug}/events/", "get", 200>>;
  /** `ref` is `"@e42"` or 42; any other rejects with 400 `invalid_ref` before a request. */
  readEvent(ref: string | number, query?: Query<C<"events/{seq}/">, "get">): Promise<Json<C<"events/{seq}/">, "get", 200>>;
  evaluate(body?: Body<"/api/v1/contexts/{slug}/evaluations/", "post">): Promise<Json<"/api/v1/contexts/{slug}/evaluations/", "post", 201>>;
  submit(body: Body<"/api/v1/contexts/{slug}/transactions/", "post">): Promise<Json<"/api/v1/contexts/{slug}/transactions/", "post", 201>>;
  transactions(query?: Query<C<"transactions/">, "get">): Promise<Json<C<"transactions/">, "get", 200>>;
  /** 200 with the first action on a retry under the same `idempotency_key`. */
  registerAction(body: Body<C<"actions/">, "post">): Promise<Json<C<"actions/">, "post", 201>>;
  /** `ref` is `"@e42"` or 42; any other rejects with 400 `invalid_ref` before a request. 409
   * `action_not_pending` once delivered or cancelled, 422 `not_an_action` for another event. */
  cancelAction(ref: string | number, body?: Body<C<"actions/{seq}/cancel/">, "post">): Promise<Json<C<"actions/{seq}/cancel/">, "post", 201>>;
  frames(query?: Record<string, unknown>): Promise<Json<"/api/v1/contexts/{slug}/frames/", "get", 200>>;
  /** `id` a frame id like `release-v1`; any other rejects with 400 `invalid_frame_id` before a request. */
  frame(id: string): Promise<Json<"/api/v1/contexts/{slug}/frames/{frame_id}/", "get", 200>>;
  relations(query?: Query<C<"relations/">, "get">): Promise<Json<C<"relations/">, "get", 200>>;
  search(q: string, query?: Record<string, unknown>): Promise<Json<"/api/v1/contexts/{slug}/search/", "get", 200>>;
  recall(body: Body<"/api/v1/contexts/{slug}/recall/", "post">): Promise<Json<"/api/v1/contexts/{slug}/recall/", "post", 200>>;
  takeApart(body: Body<"/api/v1/contexts/{slug}/replies/", "post">): Promise<any>;
  /** A retry under the same `idempotency_key` answers the first fork (200); the key with
   * another body is 409 `idempotency_key_reused`. */
  fork(body?: Body<"/api/v1/contexts/{slug}/forks/", "post">): Promise<Json<"/api/v1/contexts/{slug}/forks/", "post", 201>>;
  evaluations(query?: Query<C<"evaluations/">, "get">): Promise<Json<C<"evaluations/">, "get", 200>>;
  /** `id` a positive integer; anything else rejects with 400 `invalid_request` before a request. */
  evaluation(id: number): Promise<Json<C<"evaluations/{evaluation_id}/">, "get", 200>>;
  diff(from: number, to?: number): Promise<Json<C<"diff/">, "get", 200>>;
  protocol(): Promise<{ version: string; instructions: string; tools: { openai: unknown[]; anthropic: unknown[] } }>;
  tools(shape: "openai" | "anthropic"): Promise<unknown[]>;
}
