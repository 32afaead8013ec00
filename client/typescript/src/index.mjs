// A small client for the Morphz REST API (docs/rest.md) on the platform's fetch. Types: the
// request and answer shapes are generated from the server's OpenAPI schema into schema.d.ts
// (openapi-typescript); src/index.d.mts names them for each method.

/** An error answer of the API: `status`, the stable `code`, `message` and `details`. */
export class MorphzError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {unknown[]} details */
  constructor(status, code, message, details) {
    super(`${status} ${code}: ${message}`);
    this.name = "MorphzError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The server could not be reached, or the connection dropped before an answer. */
export class MorphzTransportError extends Error {
  /** @param {string} message @param {unknown} cause */
  constructor(message, cause) {
    super(message, { cause });
    this.name = "MorphzTransportError";
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A value that goes into a URL path (an event ref, a frame id, an evaluation id) is checked
// before any request, so that no other text reaches the server as another path: the method's
// promise rejects with the MorphzError the server gives such a value (400 and its code, as the
// Python client's InvalidRefError and InvalidPathValueError), `details` naming the argument.

// The server's rule for an event ref (memory/vocabulary.py): "@e", ASCII digits, no leading
// zero.
const EVENT_REF = /^@e([1-9][0-9]{0,17})$/;

/** The sequence number of `ref` (`"@e42"` or 42). @param {string | number} ref */
function seq(ref) {
  if (Number.isSafeInteger(ref) && Number(ref) >= 1) return Number(ref);
  const match = typeof ref === "string" ? EVENT_REF.exec(ref) : null;
  if (match) return match[1];
  throw new MorphzError(400, "invalid_ref", `not an event ref like "@e42": ${JSON.stringify(ref)}`, [{ field: "ref" }]);
}

export class MorphzClient {
  /**
   * @param {string} baseUrl like http://127.0.0.1:8000
   * @param {string} token a context token (mz_...)
   * @param {{context?: string, retries?: number, retryWaitMs?: number, fetch?: typeof fetch}} [options]
   *   without `context`, the one context the token sees, asked of the server by the first
   *   request that needs it (as the Python client does)
   */
  constructor(baseUrl, token, options = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
    /** @type {string | undefined} */
    this.slug = options.context || undefined;
    /** @type {Promise<string> | undefined} */
    this.discovery = undefined;
    this.retries = options.retries ?? 2;
    this.retryWaitMs = options.retryWaitMs ?? 500;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * One request. A read, or a write carrying an `idempotency_key`, is sent again after a
   * dropped connection or a 503 `database_unavailable` (the server answers a repeated keyed
   * write with its first result); any other failure is thrown at once.
   * @param {string} method @param {string | Promise<string>} path @param {{query?: Record<string, unknown>, body?: any}} [init]
   * @returns {Promise<any>}
   */
  async request(method, path, init = {}) {
    path = await path; // a context's path waits for the context to be known
    const url = new URL(this.baseUrl + path);
    // A parameter is one string, number or boolean; undefined or null is one not given. An
    // array or object is refused here: String() would send it as "a,b" or "[object Object]",
    // and the server takes each parameter once.
    for (const [key, value] of Object.entries(init.query ?? {})) {
      if (value === undefined || value === null) continue;
      if (!["string", "number", "boolean", "bigint"].includes(typeof value)) {
        const kind = Array.isArray(value) ? "an array" : `a ${typeof value}`;
        throw new MorphzError(400, "invalid_request", `query parameter '${key}' is ${kind}; send one string, number or boolean`, [
          { field: key, reason: "not_one_value" },
        ]);
      }
      url.searchParams.set(key, String(value));
    }
    // Any body but `undefined` is sent as JSON, `null` too: the server refuses a body that is
    // not an object (400 `invalid_request`), as it refuses every other malformed one.
    const keyed = init.body !== null && typeof init.body === "object" && "idempotency_key" in init.body;
    const repeatable = method === "GET" || keyed;
    for (let attempt = 0; ; attempt++) {
      let response;
      try {
        response = await this.fetch(url, {
          method,
          headers: { Authorization: `Bearer ${this.token}`, "Content-Type": "application/json" },
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
        });
      } catch (cause) {
        if (repeatable && attempt < this.retries) {
          await sleep(this.retryWaitMs * (attempt + 1));
          continue;
        }
        throw new MorphzTransportError(`${method} ${path}: ${cause}`, cause);
      }
      const text = await response.text();
      let body = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      if (response.ok && body !== null) return body;
      const error = body?.error;
      const failure = error
        ? new MorphzError(response.status, String(error.code), String(error.message), error.details ?? [])
        : new MorphzError(response.status, "unexpected_response", `HTTP ${response.status}`, []);
      if (repeatable && failure.code === "database_unavailable" && attempt < this.retries) {
        await sleep(this.retryWaitMs * (attempt + 1));
        continue;
      }
      throw failure;
    }
  }

  /**
   * This client's context: the one given, else the one context the token sees (asked once; a
   * failed ask is asked again by the next request). A token that sees several contexts, or
   * none, rejects with 400 `context_required`: pass `{context}`.
   * @returns {Promise<string>}
   */
  async contextSlug() {
    if (this.slug !== undefined) return this.slug;
    this.discovery ??= this.contexts().then(
      ({ contexts }) => {
        if (contexts.length !== 1) {
          const seen = contexts.length ? `${contexts.length} contexts` : "no context";
          throw new MorphzError(400, "context_required", `this token sees ${seen}; pass {context: SLUG}`, [{ field: "context" }]);
        }
        this.slug = contexts[0].slug;
        return this.slug;
      },
      (error) => {
        this.discovery = undefined;
        throw error;
      },
    );
    return this.discovery;
  }

  /** The path of `rest` in this client's context. @param {string} [rest] @returns {Promise<string>} */
  async ctx(rest = "") {
    return `/api/v1/contexts/${encodeURIComponent(await this.contextSlug())}/${rest}`;
  }

  /** The API index: `{version, schema, docs, contexts}`, each a link. */
  index() { return this.request("GET", "/api/v1/"); }
  /** `{contexts}`: the contexts this token may use. */
  contexts() { return this.request("GET", "/api/v1/contexts/"); }
  context() { return this.request("GET", this.ctx()); }
  /** @param {any} body `{frozen}` (unfreezing takes an admin token) or `{screening}` (admin) */
  updateContext(body) { return this.request("PATCH", this.ctx(), { body }); }
  /** @param {any} event */
  appendEvent(event) { return this.request("POST", this.ctx("events/"), { body: event }); }
  /** @param {Record<string, unknown>} [query] */
  events(query) { return this.request("GET", this.ctx("events/"), { query }); }
  /**
   * A slice of an event's text: `{content, size, status, next_offset}`.
   * @param {string | number} ref `"@e42"` or 42 @param {Record<string, unknown>} [query] `{offset, length}`
   */
  async readEvent(ref, query) { return this.request("GET", this.ctx(`events/${seq(ref)}/`), { query }); }
  /** @param {any} [body] */
  evaluate(body = {}) { return this.request("POST", this.ctx("evaluations/"), { body }); }
  /** @param {any} body the text form `{text}` or the JSON form `{ops, base_version, reason}` */
  submit(body) { return this.request("POST", this.ctx("transactions/"), { body }); }
  /** @param {Record<string, unknown>} [query] */
  transactions(query) { return this.request("GET", this.ctx("transactions/"), { query }); }
  /** @param {any} body `{name, arguments, thread, idempotency_key}` */
  registerAction(body) { return this.request("POST", this.ctx("actions/"), { body }); }
  /**
   * Cancel a pending action: the server appends a `tool_result` delivering it, "cancelled by
   * {who}: {reason}"; `{ref, cancels}`. 409 `action_not_pending` for one already delivered or
   * cancelled, 422 `not_an_action` for an event that is no action, `unknown_ref` for none.
   * @param {string | number} ref `"@e42"` or 42 @param {any} [body] `{reason}`
   */
  async cancelAction(ref, body = {}) { return this.request("POST", this.ctx(`actions/${seq(ref)}/cancel/`), { body }); }
  /** @param {Record<string, unknown>} [query] */
  frames(query) { return this.request("GET", this.ctx("frames/"), { query }); }
  /** @param {string} id */
  async frame(id) {
    if (typeof id !== "string" || !/^[a-z0-9][a-z0-9._-]{0,127}$/.test(id)) {
      throw new MorphzError(400, "invalid_frame_id", `not a frame id like release-v1: ${JSON.stringify(id)}`, [{ field: "frame_id" }]);
    }
    return this.request("GET", this.ctx(`frames/${id}/`));
  }
  /** @param {Record<string, unknown>} [query] */
  relations(query) { return this.request("GET", this.ctx("relations/"), { query }); }
  /** @param {string} q @param {Record<string, unknown>} [query] */
  search(q, query = {}) { return this.request("GET", this.ctx("search/"), { query: { q, ...query } }); }
  /** @param {any} body */
  recall(body) { return this.request("POST", this.ctx("recall/"), { body }); }
  /** @param {any} body a model reply: `{text, tool_calls, ...}` */
  takeApart(body) { return this.request("POST", this.ctx("replies/"), { body }); }
  /**
   * Fork this context at `at_version` (default: now): `{slug, token, forked_from, version,
   * tick}`; the token, for the new context, is shown once. With `idempotency_key` the fork is
   * sent again after a dropped connection or a 503, and the server answers the retry with the
   * first fork and the same token.
   * @param {any} [body] `{slug, at_version, name, idempotency_key}`, each optional
   */
  fork(body = {}) { return this.request("POST", this.ctx("forks/"), { body }); }
  /** @param {Record<string, unknown>} [query] */
  evaluations(query) { return this.request("GET", this.ctx("evaluations/"), { query }); }
  /** One evaluation with the compiled input the model was given. @param {number} id */
  async evaluation(id) {
    if (!Number.isSafeInteger(id) || id < 1) {
      throw new MorphzError(400, "invalid_request", `not an evaluation id (a positive integer): ${JSON.stringify(id)}`, [{ field: "evaluation_id" }]);
    }
    return this.request("GET", this.ctx(`evaluations/${id}/`));
  }
  /** What changed between two versions (default `to`: now). @param {number} from @param {number} [to] */
  diff(from, to) { return this.request("GET", this.ctx("diff/"), { query: { from, to } }); }
  /** The model protocol: `{version, instructions, tools: {openai, anthropic}}`. */
  protocol() { return this.request("GET", this.ctx("protocol/")); }
  /**
   * The protocol's tool definitions in one provider's shape.
   * @param {"openai" | "anthropic"} shape
   */
  async tools(shape) {
    const protocol = await this.protocol();
    return protocol.tools[shape];
  }
}
