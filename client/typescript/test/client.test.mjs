// Run by tests/agents/test_typescript_client.py against a live server: MORPHZ_URL, MORPHZ_TOKEN,
// MORPHZ_CONTEXT name a fresh context.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MorphzClient, MorphzError, MorphzTransportError } from "../src/index.mjs";

const url = process.env.MORPHZ_URL;
const token = process.env.MORPHZ_TOKEN;
const context = process.env.MORPHZ_CONTEXT;
const mz = () => new MorphzClient(url, token, { context, retryWaitMs: 10 });

test("events, evaluations, transactions and frames round-trip", async () => {
  const client = mz();
  const event = await client.appendEvent({ kind: "tool_result", content: "suite: 12 passed" });
  assert.equal(event.ref, "@e1");
  const view = await client.evaluate({});
  assert.deepEqual(view.claimed, ["@e1"]);
  const receipt = await client.submit({
    text: `(context-tx (base-version ${view.view_version}) (derive release (from @e1) (tests passed)))`,
  });
  assert.equal(receipt.version, 1);
  const frame = await client.frame("release");
  assert.deepEqual(frame.body, { tests: "passed" });
  assert.deepEqual((await client.frames()).frames.map((f) => f.id), ["release"]);
});

test("error answers are typed with status, code and details", async () => {
  const client = mz();
  await assert.rejects(client.submit({ text: "(context-tx (derive" }), (err) => {
    assert.ok(err instanceof MorphzError);
    assert.equal(err.status, 400);
    assert.equal(err.code, "parse_error");
    assert.equal(err.details[0].line, 1);
    return true;
  });
  await assert.rejects(client.frame("nope"), (err) => err instanceof MorphzError && err.status === 404);
  await assert.rejects(client.frame("../transactions"), (err) => err.code === "invalid_frame_id");
  const stranger = new MorphzClient(url, "mz_wrong", { context });
  await assert.rejects(stranger.context(), (err) => err instanceof MorphzError && err.status === 401);
});

test("a keyed write is retried after a dropped connection and written once", async () => {
  let calls = 0;
  // The first attempt reaches the server, then the connection "drops" before the answer.
  const flaky = async (input, init) => {
    calls += 1;
    const response = await fetch(input, init);
    if (calls === 1) throw new TypeError("fetch failed: socket hang up");
    return response;
  };
  const client = new MorphzClient(url, token, { context, retryWaitMs: 10, fetch: flaky });
  const body = { kind: "tool_result", content: "keyed", idempotency_key: "ts-key-1" };
  const event = await client.appendEvent(body);
  assert.equal(calls, 2);
  assert.equal(event.created, false); // the server answered the retry with the first result
  const keyed = (await mz().events({ kind: "tool_result" })).events.filter((e) => e.preview === "keyed");
  assert.equal(keyed.length, 1);
  // Without a key the write is not repeated: the caller learns the outcome is unknown.
  calls = 0;
  await assert.rejects(client.appendEvent({ kind: "tool_result", content: "unkeyed" }), MorphzTransportError);
  assert.equal(calls, 1);
});

test("the protocol's tool definitions in both provider shapes", async () => {
  const client = mz();
  const openai = await client.tools("openai");
  const anthropic = await client.tools("anthropic");
  assert.ok(openai.length > 0 && openai.length === anthropic.length);
  assert.ok(openai.every((t) => t.type === "function" && typeof t.function.name === "string"));
  assert.deepEqual(
    anthropic.map((t) => t.name),
    openai.map((t) => t.function.name),
  );
});

test("a fork's token reaches the new context, and a keyed retry answers the first fork", async () => {
  // Every answer's status, to tell a new fork (201) from a replayed one (200).
  const statuses = [];
  let drop = false;
  const watching = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    if (drop) {
      drop = false; // the request reached the server; its answer is lost
      throw new TypeError("fetch failed: socket hang up");
    }
    return response;
  };
  const client = new MorphzClient(url, token, { context, retryWaitMs: 10, fetch: watching });
  const body = { slug: `${context}-fork`, idempotency_key: "ts-fork-1" };
  const fork = await client.fork(body);
  assert.equal(fork.slug, `${context}-fork`);
  assert.equal(fork.forked_from.slug, context);
  assert.deepEqual(statuses, [201]);
  // The fork's token works on the fork, which holds this context's history.
  const forked = new MorphzClient(url, fork.token, { context: fork.slug });
  const copy = await forked.context();
  assert.equal(copy.slug, fork.slug);
  assert.equal(copy.last_seq, (await mz().context()).last_seq);

  // The same key and body: the first fork and the same token, answered 200; no second fork.
  assert.deepEqual(await client.fork(body), fork);
  assert.deepEqual(statuses, [201, 200]);
  // The answer lost on a dropped connection: the keyed fork is sent again and replayed.
  drop = true;
  assert.deepEqual(await client.fork(body), fork);
  assert.deepEqual(statuses, [201, 200, 200, 200]);

  // The key with another body is refused: it named another fork.
  await assert.rejects(client.fork({ ...body, name: "another" }), (err) => {
    assert.ok(err instanceof MorphzError);
    assert.equal(err.status, 409);
    assert.equal(err.code, "idempotency_key_reused");
    assert.deepEqual(err.details, [{ field: "idempotency_key" }]);
    return true;
  });
  // Without a key a dropped fork is not sent again: a retry could fork twice.
  drop = true;
  statuses.length = 0;
  await assert.rejects(client.fork({}), MorphzTransportError);
  assert.deepEqual(statuses, [201]);
});

test("listings, event slices, actions, history and freezing reach their operations", async () => {
  const client = mz();
  assert.deepEqual((await client.index()).contexts, [`/api/v1/contexts/${context}/`]);
  assert.deepEqual((await client.contexts()).contexts.map((c) => c.slug), [context]);
  // The first test's event and transaction: read back by the methods that list them.
  assert.equal((await client.readEvent("@e1", { offset: 7, length: 2 })).content, "12");
  assert.equal((await client.readEvent(1)).content, "suite: 12 passed");
  await assert.rejects(client.readEvent("@e01"), (err) => err.code === "invalid_ref");
  const [tx] = (await client.transactions({ frame: "release" })).transactions;
  assert.equal(tx.status, "committed");
  assert.equal(tx.committed_version, 1);
  assert.deepEqual((await client.relations()).relations, []);
  const diff = await client.diff(0, 1);
  assert.equal(diff.to_version, 1);
  assert.deepEqual(diff.transactions.map((t) => t.id), [tx.id]);
  const [first] = (await client.evaluations()).evaluations;
  assert.equal((await client.evaluation(first.id)).id, first.id);
  await assert.rejects(client.evaluation(0), (err) => err.code === "invalid_request");
  // A keyed action is registered once.
  const action = await client.registerAction({ name: "deploy", idempotency_key: "ts-action-1" });
  assert.equal(action.kind, "action");
  assert.equal((await client.registerAction({ name: "deploy", idempotency_key: "ts-action-1" })).ref, action.ref);
  // Freezing, on a fork so that the other tests' context stays writable (unfreezing takes an
  // admin token).
  const fork = await client.fork({ slug: `${context}-frozen` });
  const forked = new MorphzClient(url, fork.token, { context: fork.slug });
  assert.equal((await forked.updateContext({ frozen: true })).frozen, true);
  await assert.rejects(
    forked.appendEvent({ kind: "tool_result", content: "late" }),
    (err) => err.status === 409 && err.code === "context_frozen",
  );
});

test("a pending action is cancelled once; a non-action and a malformed ref are refused", async () => {
  const client = mz();
  const action = await client.registerAction({ name: "refund", arguments: { order: 7 } });
  const open = async () => (await client.events({ status: "open" })).events.map((e) => e.ref);
  assert.ok((await open()).includes(action.ref));
  const cancelled = await client.cancelAction(action.ref, { reason: "customer withdrew" });
  assert.equal(cancelled.cancels, action.ref);
  assert.deepEqual(Object.keys(cancelled).sort(), ["cancels", "ref"]);
  assert.ok(!(await open()).includes(action.ref));
  const result = await client.readEvent(cancelled.ref);
  assert.equal(result.kind, "tool_result");
  assert.match(result.content, /: customer withdrew$/);
  // Already cancelled (the seq names it as the ref does): nothing to cancel.
  await assert.rejects(client.cancelAction(action.seq), (err) => {
    assert.ok(err instanceof MorphzError);
    assert.equal(err.status, 409);
    assert.equal(err.code, "action_not_pending");
    return true;
  });
  await assert.rejects(client.cancelAction(cancelled.ref), (err) => err.status === 422 && err.code === "not_an_action");
  // Without a body, as the body is optional.
  const other = await client.registerAction({ name: "refund" });
  assert.equal((await client.cancelAction(other.ref)).cancels, other.ref);
});

test("a null body reaches the server, which refuses it as a MorphzError", async () => {
  const client = mz();
  const refused = (err) => {
    assert.ok(err instanceof MorphzError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, "invalid_request");
    return true;
  };
  for (const call of [
    () => client.updateContext(null),
    () => client.registerAction(null),
    () => client.cancelAction(1, null),
    () => client.appendEvent(null),
    () => client.submit(null),
    () => client.fork(null),
    () => client.recall(null),
    () => client.takeApart(null),
    () => client.evaluate(null),
  ]) {
    await assert.rejects(call(), refused);
  }
});

test("a path value the server could not have made rejects the promise, before any request", async () => {
  let sent = 0;
  const counting = async (input, init) => {
    sent += 1;
    return fetch(input, init);
  };
  const client = new MorphzClient(url, token, { context, fetch: counting });
  for (const [call, code, field] of [
    [() => client.evaluation("1"), "invalid_request", "evaluation_id"],
    [() => client.evaluation(0), "invalid_request", "evaluation_id"],
    [() => client.frame("Bad Id"), "invalid_frame_id", "frame_id"],
    [() => client.frame(undefined), "invalid_frame_id", "frame_id"],
    [() => client.readEvent("@e01"), "invalid_ref", "ref"],
    [() => client.cancelAction("@e01"), "invalid_ref", "ref"],
    [() => client.cancelAction(0), "invalid_ref", "ref"],
  ]) {
    let answer;
    assert.doesNotThrow(() => {
      answer = call();
    });
    assert.ok(answer instanceof Promise);
    await assert.rejects(answer, (err) => {
      assert.ok(err instanceof MorphzError);
      assert.equal(err.status, 400);
      assert.equal(err.code, code);
      assert.deepEqual(err.details, [{ field }]);
      return true;
    });
  }
  assert.equal(sent, 0);
});

test("without a context the client uses the token's one context, asked once", async () => {
  const sent = [];
  const recording = async (input, init) => {
    sent.push(new URL(input).pathname);
    return fetch(input, init);
  };
  for (const client of [new MorphzClient(url, token), new MorphzClient(url, token, { fetch: recording })]) {
    const [a, b] = await Promise.all([client.context(), client.frames()]);
    assert.equal(a.slug, context);
    assert.ok(Array.isArray(b.frames));
    assert.equal(client.slug, context);
    assert.equal(await client.contextSlug(), context);
  }
  assert.deepEqual(sent.filter((path) => path === "/api/v1/contexts/"), ["/api/v1/contexts/"]);
  assert.ok(sent.every((path) => path === "/api/v1/contexts/" || path.startsWith(`/api/v1/contexts/${context}/`)));
  // A token that sees several contexts cannot choose: the request is refused, none is sent.
  const answering = (body) => async (input) => {
    sent.push(new URL(input).pathname);
    return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  sent.length = 0;
  const several = new MorphzClient(url, token, { fetch: answering({ contexts: [{ slug: "a" }, { slug: "b" }] }) });
  await assert.rejects(several.context(), (err) => {
    assert.ok(err instanceof MorphzError);
    assert.equal(err.status, 400);
    assert.equal(err.code, "context_required");
    assert.deepEqual(err.details, [{ field: "context" }]);
    return true;
  });
  assert.deepEqual(sent, ["/api/v1/contexts/"]);
});

test("a query parameter is one value: arrays and objects are refused, null is not given", async () => {
  const sent = [];
  const recording = async (input, init) => {
    sent.push(new URL(input));
    return fetch(input, init);
  };
  const client = new MorphzClient(url, token, { context, fetch: recording });
  for (const [call, field] of [
    [() => client.search("cancel", { type: ["frame", "event"] }), "type"],
    [() => client.search("cancel", { limit: { n: 5 } }), "limit"],
    [() => client.events({ kind: ["tool_result"] }), "kind"],
  ]) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof MorphzError);
      assert.equal(err.status, 400);
      assert.equal(err.code, "invalid_request");
      assert.match(err.message, new RegExp(`'${field}'`));
      assert.deepEqual(err.details, [{ field, reason: "not_one_value" }]);
      return true;
    });
  }
  assert.deepEqual(sent, []);
  // null, like undefined, is a parameter not given.
  await client.events({ kind: "tool_result", limit: null });
  assert.deepEqual([...sent[0].searchParams], [["kind", "tool_result"]]);
});

// REST operations the client has no method for, on purpose, each with its reason (the test
// below fails for any other operation without a method, and for a stale entry here).
const NOT_IN_THE_CLIENT = {
  health_live: "a probe for load balancers, taking no token: not a context's operation",
  health_ready: "a probe for load balancers, taking no token: not a context's operation",
  erasures_list: "an operator's tool (an erase-scope token); the Python client has none either",
  erasures_create: "an operator's tool (an erase-scope token); the Python client has none either",
  frames_revise_body: "the explorer's frame editor; agents revise frames by transactions (submit)",
  frames_revision_read: "frame() answers the revisions; the Python client has no such method either",
};

test("every operation of the server's OpenAPI schema has a method, or a reason not to", async () => {
  const schema = await (await fetch(`${url}/api/schema/`, { headers: { Accept: "application/vnd.oai.openapi+json" } })).json();
  const verbs = ["get", "put", "post", "patch", "delete"];
  const operations = Object.entries(schema.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([verb]) => verbs.includes(verb))
      .map(([verb, op]) => ({
        id: op.operationId,
        method: verb.toUpperCase(),
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
      })),
  );
  assert.ok(operations.length > 20, "the schema lists the API's operations");
  // Which operations the methods reach: every method (but request(), which reaches any path)
  // is called with stand-in arguments through a fetch that records the request and answers {}.
  const sent = [];
  const record = async (input, init) => {
    sent.push({ method: init.method, path: new URL(input).pathname });
    return new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } });
  };
  const client = new MorphzClient("http://client.test", "mz_stand_in", { context: "c", fetch: record });
  const methods = Object.getOwnPropertyNames(MorphzClient.prototype).filter((m) => !["constructor", "request"].includes(m));
  for (const name of methods) {
    for (const args of [[], ["x"], [1], [1, 2]]) {
      try {
        await client[name](...args);
      } catch {
        // a stand-in the method refuses, or an answer it cannot read: only the request counts
      }
    }
  }
  const covered = new Set();
  for (const { method, path } of sent) {
    const op = operations.find((o) => o.method === method && o.pattern.test(path));
    assert.ok(op, `the client sends ${method} ${path}, which is no operation of the schema`);
    covered.add(op.id);
  }
  const missing = operations.map((o) => o.id).filter((id) => !covered.has(id) && !(id in NOT_IN_THE_CLIENT));
  assert.deepEqual(missing, [], "operations without a client method: add one, or a reason to NOT_IN_THE_CLIENT");
  const stale = Object.keys(NOT_IN_THE_CLIENT).filter((id) => covered.has(id) || !operations.some((o) => o.id === id));
  assert.deepEqual(stale, [], "NOT_IN_THE_CLIENT names operations that have a method, or that the API no longer has");
});
