// Loading and comparing the chat conformance fixtures (__test__/fixtures/chat/<case>.json).
// See README.md in this folder for the fixture layout.
import { readFileSync, readdirSync } from "node:fs";

const DIR = new URL("../fixtures/chat/", import.meta.url);

/** Request headers that are not part of the contract: SDK telemetry and HTTP-client/transport artefacts. */
export const NON_CONTRACT_HEADERS = /^(user-agent|x-stainless-.*|host|content-length|connection|accept-language|sec-fetch-mode|accept-encoding)$/;

export function chatFixtureNames() {
  return readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -5))
    .sort();
}

export function loadChatFixture(name) {
  return JSON.parse(readFileSync(new URL(`${name}.json`, DIR), "utf8"));
}

/** Deep copy of `value` with every "@BASE@" in strings replaced by `baseUrl` (the mock's URL). */
export function withBase(value, baseUrl) {
  return JSON.parse(JSON.stringify(value), (_k, v) => (typeof v === "string" ? v.split("@BASE@").join(baseUrl) : v));
}

/**
 * A recorded request (mock-provider.mjs record) reduced to what the fixtures pin: method, path, query,
 * contract headers, body encoding, decoded body, dialect, scenario; `seq` renumbered from 1.
 * WebSocket upgrade attempts are left out (the Rust core is SSE-only).
 */
export function normalizeRequests(records) {
  return records
    .filter((r) => !r.upgrade)
    .map((r, i) => {
      const headers = {};
      for (const [k, v] of Object.entries(r.headers)) if (!NON_CONTRACT_HEADERS.test(k)) headers[k] = v;
      return {
        seq: i + 1,
        method: r.method,
        path: r.path,
        query: r.query,
        headers,
        bodyEncoding: r.bodyEncoding,
        body: r.body,
        dialect: r.dialect,
        scenario: r.scenario,
      };
    });
}

function getPath(obj, path) {
  return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function setPath(obj, path, value) {
  const keys = path.split(".");
  const last = keys.pop();
  const target = keys.reduce((o, k) => o?.[k], obj);
  if (target && last in target) target[last] = value;
}

/** Whether `actual` satisfies a volatile rule of the fixture (see README). */
export function volatileOk(rule, actualChunk) {
  const v = getPath(actualChunk, rule.field);
  switch (rule.rule) {
    case "epochMs":
      return Number.isFinite(v) && Math.abs(v - Date.now()) < 10 * 60_000;
    case "range":
      return Number.isFinite(v) && v >= rule.min && v <= rule.max;
    case "timing":
      return Number.isFinite(v) && v >= 0;
    case "pattern":
      return typeof v === "string" && new RegExp(rule.pattern).test(v);
    case "sum":
      return Number.isFinite(v) && v + rule.of.reduce((s, f) => s + getPath(actualChunk, f), 0) === rule.equals;
    default:
      return false;
  }
}

/**
 * Actual chunk lines with every volatile field that satisfies its rule replaced by the expected value,
 * so `expect(normalizeChunks(actual, fixture)).toEqual(fixture.expectedChunks)` ignores only what may vary.
 * Error lines are `{ error: { name, code?, message, replayBoundaryCrossed } }` like the recording.
 */
export function normalizeChunks(actual, fixture) {
  const out = structuredClone(actual);
  // Rules are checked against the untouched actual chunks, then applied.
  const passing = (fixture.volatile ?? []).filter((rule) => actual[rule.chunk] !== undefined && volatileOk(rule, actual[rule.chunk]));
  for (const rule of passing) setPath(out[rule.chunk], rule.field, getPath(fixture.expectedChunks[rule.chunk], rule.field));
  return out;
}

/** The recorded error line for a thrown error (code only when the error has one). */
export function errorLine(error) {
  return {
    error: {
      name: error.name,
      ...(error.code !== undefined ? { code: error.code } : {}),
      message: error.message,
      replayBoundaryCrossed: error.replayBoundaryCrossed === true,
    },
  };
}
