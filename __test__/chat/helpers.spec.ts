// Blade's pure helpers as pi-native/chat exports them (spec §2.2, §2.4, §3.4, §3.5, §6.1, §6.5, §6.6, §7).
// Cases mirror Blade's provider-retry, reasoning-effort, service-tier, response-verbosity and
// pi-stream-adapter tests.
import { describe, expect, it } from "vitest";
import {
  classifyProviderRetry,
  computeProviderRetryDelay,
  filterOrphanToolMessages,
  getProviderRetryAfterMs,
  getSupportedResponseVerbosities,
  getSupportedServiceTiers,
  hasNonThinkingToolHistory,
  ProviderRecoveryBudgetExceededError,
  ProviderRequestDeadlineExceededError,
  ProviderStreamClosedError,
  resolveReasoningEffort,
  resolveResponseVerbosity,
  resolveServiceTier,
  resolveStreamStallWarningMs,
  StreamIdleTimeoutError,
} from "../../lib/chat.js";
import type { Any } from "./support.js";

function model(overrides: Any = {}): Any {
  return {
    id: "reasoning-model",
    name: "Reasoning Model",
    provider: "openai",
    api: "openai-responses",
    baseUrl: "https://example.test/v1",
    reasoning: true,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 16_000,
    ...overrides,
  };
}

describe("classifyProviderRetry", () => {
  it.each([
    ["429 rate limited", "rate_limit", 429],
    ["Error: 429 rate limited", "rate_limit", 429],
    ["status 503 upstream unavailable", "server_error", 503],
    ['503: {"message":"x","type":"server_error"}', "server_error", 503],
    ["ECONNRESET while reading response", "transport", undefined],
    ["Provider stream closed before completion", "stream_closed", undefined],
    ["Stream ended without finish_reason", "stream_closed", undefined],
    ["Request timed out", "timeout", undefined],
    ["Upstream service temporarily unavailable", "server_error", undefined],
    ['{"type":"upstream_error","message":"bad gateway"}', "server_error", undefined],
  ] as const)("%s → retryable %s", (message, reason, statusCode) => {
    expect(classifyProviderRetry(new Error(message))).toEqual({ retryable: true, reason, ...(statusCode !== undefined ? { statusCode } : {}) });
  });

  it("keeps quota, context, abort and idle failures terminal", () => {
    expect(classifyProviderRetry(new Error("429 insufficient_quota billing exhausted"))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new Error("status 503 maximum context length exceeded"))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new DOMException("Stopped", "AbortError"))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new Error("Request aborted"))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new StreamIdleTimeoutError(20))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new ProviderRecoveryBudgetExceededError(30_000, 30_001))).toEqual({ retryable: false });
    expect(classifyProviderRetry(Object.assign(new Error("Provider stream idle timeout"), { code: "STREAM_IDLE_TIMEOUT" }))).toEqual({ retryable: false });
    expect(classifyProviderRetry(new Error("status 400 invalid request"))).toEqual({ retryable: false, statusCode: 400 });
  });

  it("obeys explicit retry headers and typed errors", () => {
    expect(classifyProviderRetry(new ProviderRequestDeadlineExceededError(500))).toEqual({ retryable: true, reason: "timeout" });
    expect(classifyProviderRetry(new ProviderRequestDeadlineExceededError(500), { shouldRetry: "false", statusCode: 408 })).toEqual({
      retryable: false,
      statusCode: 408,
    });
    expect(classifyProviderRetry(new Error("status 503"), { statusCode: 503, shouldRetry: "false" })).toEqual({ retryable: false, statusCode: 503 });
    expect(classifyProviderRetry(new Error("status 400"), { statusCode: 400, shouldRetry: "true" })).toEqual({
      retryable: true,
      reason: "server_error",
      statusCode: 400,
    });
    expect(classifyProviderRetry(new Error("boom"), { statusCode: 429, shouldRetry: "true" })).toEqual({ retryable: true, reason: "rate_limit", statusCode: 429 });
    expect(classifyProviderRetry(new ProviderStreamClosedError())).toEqual({ retryable: true, reason: "stream_closed" });
    // A numeric status on the error object counts; the response metadata wins over the message.
    expect(classifyProviderRetry(Object.assign(new Error("boom"), { status: 502 }))).toEqual({ retryable: true, reason: "server_error", statusCode: 502 });
    expect(classifyProviderRetry(new Error("status 500"), { statusCode: 429 })).toEqual({ retryable: true, reason: "rate_limit", statusCode: 429 });
    expect(classifyProviderRetry(new Error("conflict"), { statusCode: 409 })).toEqual({ retryable: true, reason: "timeout", statusCode: 409 });
    // Non-Error values are classified by their text.
    expect(classifyProviderRetry("Upstream service temporarily unavailable")).toEqual({ retryable: true, reason: "server_error" });
    expect(classifyProviderRetry(new Error("something odd"))).toEqual({ retryable: false });
  });
});

describe("retry delays", () => {
  it("jittered exponential backoff without a server directive", () => {
    expect(computeProviderRetryDelay(1, undefined, { random: 0 })).toBe(375);
    expect(computeProviderRetryDelay(1, undefined, { random: 1 })).toBe(500);
    expect(computeProviderRetryDelay(2, undefined, { random: 1 })).toBe(1_000);
    expect(computeProviderRetryDelay(20, undefined, { random: 1 })).toBe(8_000);
    expect(computeProviderRetryDelay(20, undefined, { random: 1, maxExponentialDelayMs: 60_000 })).toBe(60_000);
    for (let i = 0; i < 20; i++) {
      const d = computeProviderRetryDelay(1);
      expect(d).toBeGreaterThanOrEqual(375);
      expect(d).toBeLessThanOrEqual(500);
    }
  });

  it("honours Retry-After seconds, retry-after-ms and HTTP dates within the bound", () => {
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfter: "3" }, { now: 1_000 })).toBe(3_000);
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfterMs: "1250" }, { now: 1_000 })).toBe(1_250);
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfterMs: "12.2" }, { now: 1_000 })).toBe(13);
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfter: new Date(5_000).toUTCString() }, { now: 1_000 })).toBe(4_000);
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfter: "3600" }, { now: 1_000 })).toBe(60_000);
    expect(computeProviderRetryDelay(20, { statusCode: 429, retryAfter: "3600" }, { random: 1, maxDelayMs: 60_000, maxExponentialDelayMs: 60_000 })).toBe(
      60_000,
    );
    // retry-after-ms wins over Retry-After.
    expect(computeProviderRetryDelay(1, { statusCode: 429, retryAfter: "3", retryAfterMs: "20" }, { now: 0 })).toBe(20);
  });

  it("getProviderRetryAfterMs parses, clamps negatives to 0 and ignores garbage", () => {
    expect(getProviderRetryAfterMs({ statusCode: 429, retryAfter: "2" }, 0)).toBe(2_000);
    expect(getProviderRetryAfterMs({ statusCode: 429, retryAfterMs: "12.5" }, 0)).toBe(12.5);
    expect(getProviderRetryAfterMs({ statusCode: 429, retryAfter: new Date(0).toUTCString() }, 10_000)).toBe(0);
    expect(getProviderRetryAfterMs({ statusCode: 429, retryAfter: "soon" }, 0)).toBeUndefined();
    expect(getProviderRetryAfterMs({ statusCode: 429 }, 0)).toBeUndefined();
    expect(getProviderRetryAfterMs(undefined, 0)).toBeUndefined();
  });
});

describe("resolveStreamStallWarningMs", () => {
  it("derives a bounded warning before the idle timeout", () => {
    expect(resolveStreamStallWarningMs(300_000)).toBe(30_000);
    expect(resolveStreamStallWarningMs(20_000)).toBe(10_000);
    expect(resolveStreamStallWarningMs(20_000, 4_000)).toBe(4_000);
    expect(resolveStreamStallWarningMs(20_000, 50_000)).toBe(10_000);
    expect(resolveStreamStallWarningMs(20_000, 0)).toBeUndefined();
    expect(resolveStreamStallWarningMs(1)).toBe(1);
  });
});

describe("tool history helpers", () => {
  const call = (id: string) => ({ id, type: "function" as const, function: { name: "read", arguments: "{}" } });
  const user: Any = { role: "user", content: "hi" };
  const assistant: Any = { role: "assistant", content: "", tool_calls: [call("c1")] };
  const result: Any = { role: "tool", tool_call_id: "c1", content: "x" };
  const orphan: Any = { role: "tool", tool_call_id: "zz", content: "x" };

  it("filterOrphanToolMessages keeps complete groups and returns the same message objects", () => {
    const filtered = filterOrphanToolMessages([user, orphan, assistant, result]);
    expect(filtered).toHaveLength(3);
    expect(filtered[0]).toBe(user);
    expect(filtered[1]).toBe(assistant);
    expect(filtered[2]).toBe(result);
  });

  it("filterOrphanToolMessages drops incomplete or ambiguous groups", () => {
    const roles = (ms: Any[]) => filterOrphanToolMessages(ms).map((m) => m.role);
    expect(roles([user, assistant, user])).toEqual(["user", "user"]); // missing result
    expect(roles([user, assistant, result, result])).toEqual(["user"]); // duplicate results
    expect(roles([user, { ...assistant, tool_calls: [call("c1"), call("c1")] }, result, result])).toEqual(["user"]); // duplicate call ids
    expect(roles([user, assistant, result, orphan])).toEqual(["user", "assistant", "tool"]); // stray result dropped
    expect(filterOrphanToolMessages([])).toEqual([]);
  });

  it("hasNonThinkingToolHistory detects tool calls made without reasoning", () => {
    expect(hasNonThinkingToolHistory([user, assistant, result])).toBe(true);
    expect(hasNonThinkingToolHistory([user, { ...assistant, reasoningContent: "think" }, result])).toBe(false);
    expect(hasNonThinkingToolHistory([user, { ...assistant, reasoningContent: "   " }, result])).toBe(true);
    expect(hasNonThinkingToolHistory([user, { ...assistant, tool_calls: [] }])).toBe(false);
    expect(hasNonThinkingToolHistory([user])).toBe(false);
  });
});

describe("capability resolution", () => {
  it("resolveReasoningEffort: explicit, auto and unsupported levels", () => {
    expect(resolveReasoningEffort(model(), "medium")).toEqual({ selection: "medium", effective: "medium", supported: ["off", "minimal", "low", "medium", "high"] });
    expect(resolveReasoningEffort(model({ thinkingLevelMap: { off: null, high: null, xhigh: "xhigh" } }), "auto")).toEqual({
      selection: "auto",
      effective: "xhigh",
      supported: ["minimal", "low", "medium", "xhigh"],
    });
    const mandatory = model({ thinkingLevelMap: { off: null, minimal: null, xhigh: null } });
    expect(() => resolveReasoningEffort(mandatory, "off")).toThrow("off is not supported");
    expect(() => resolveReasoningEffort(mandatory, "minimal")).toThrow("minimal is not supported");
    expect(() => resolveReasoningEffort(model(), "xhigh")).toThrow("Reasoning effort xhigh is not supported by Reasoning Model");
    expect(resolveReasoningEffort(model({ reasoning: false }), "auto")).toEqual({ selection: "auto", effective: "off", supported: ["off"] });
    expect(() => resolveReasoningEffort(model({ reasoning: false }), "low")).toThrow("low is not supported");
  });

  it("resolveServiceTier / getSupportedServiceTiers", () => {
    const openai = model();
    expect(resolveServiceTier(openai, "auto")).toEqual({ selection: "auto", effective: "provider-default", supported: ["standard", "fast", "flex"] });
    expect(resolveServiceTier(openai, "standard")).toMatchObject({ effective: "standard", providerValue: "default" });
    expect(resolveServiceTier(openai, "fast")).toMatchObject({ effective: "fast", providerValue: "priority" });
    expect(resolveServiceTier(openai, "flex")).toMatchObject({ effective: "flex", providerValue: "flex" });

    const opus46 = model({ api: "anthropic-messages", id: "claude-opus-4-6" });
    expect(getSupportedServiceTiers(opus46)).toEqual(["standard", "fast"]);
    expect(resolveServiceTier(opus46, "fast").providerValue).toBe("fast");
    const opus48 = model({ api: "anthropic-messages", id: "claude-opus-4-8", name: "Claude Opus 4.8" });
    expect(getSupportedServiceTiers(opus48)).toEqual(["standard"]);
    expect(() => resolveServiceTier(opus48, "fast")).toThrow("Service tier fast is not supported by Claude Opus 4.8");
    expect(() => resolveServiceTier(opus48, "flex")).toThrow("flex is not supported");

    const google = model({ api: "google-generative-ai" });
    expect(resolveServiceTier(google, "standard")).toEqual({ selection: "standard", effective: "standard", supported: ["standard"] });
    expect(() => resolveServiceTier(google, "fast")).toThrow("fast is not supported");
  });

  it.each([
    ["openai-completions", "gpt-5.5"],
    ["openai-responses", "gpt-5.4"],
    ["azure-openai-responses", "deployment/gpt-5.3-codex"],
    ["openai-codex-responses", "codex-model"],
  ])("response verbosity is offered for %s/%s", (api, id) => {
    const m = model({ api, id });
    expect(getSupportedResponseVerbosities(m)).toEqual(["low", "medium", "high"]);
    expect(resolveResponseVerbosity(m, "auto")).toEqual({ selection: "auto", effective: "provider-default", supported: ["low", "medium", "high"] });
    expect(resolveResponseVerbosity(m, "high")).toMatchObject({ selection: "high", effective: "high", providerValue: "high" });
  });

  it.each([
    ["openai-completions", "gpt-4.1"],
    ["openai-responses", "o3"],
    ["openai-responses", "gpt-50"],
    ["anthropic-messages", "claude-opus-4-6"],
  ])("response verbosity fails closed for %s/%s", (api, id) => {
    const m = model({ api, id, name: id });
    expect(getSupportedResponseVerbosities(m)).toEqual([]);
    expect(resolveResponseVerbosity(m, "auto").supported).toEqual([]);
    expect(() => resolveResponseVerbosity(m, "low")).toThrow(`Response verbosity low is not supported by ${id}`);
  });
});
