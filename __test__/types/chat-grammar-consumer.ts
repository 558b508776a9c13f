// Code a Blade-style or pi-extension user writes against pi-native/chat and /grammar; tsc must
// accept it (and reject the marked misuse).
import {
  createChatService,
  createChatServiceAsync,
  classifyProviderRetry,
  replayBoundaryCrossed,
  StreamIdleTimeoutError,
  type AbortSignalLike,
  type ChatConfig,
  type ChatRequestOptions,
  type ChatToolDefinition,
  type Message,
  type StreamChunk,
} from "../../lib/chat.js";
import { GRAMMAR_NAMES, modelLeaksGrammar, parseToolGrammarLeaks, recoverGrammarLeaks, type GrammarName } from "../../lib/grammar.js";

const config: ChatConfig = { provider: "anthropic", model: "claude-sonnet-4-5", apiKey: "k", reasoningEnabled: true, reasoningEffort: "high" };
const messages: Message[] = [
  { role: "system", content: "be brief" },
  { role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
  { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "c1", name: "read", content: "ok" },
];
const tools: ChatToolDefinition[] = [{ name: "read", description: "Read", parameters: { type: "object" }, constrainedSampling: { type: "json_schema", strict: "prefer" } }];
const options: ChatRequestOptions = { providerSessionId: "s", toolChoice: { type: "tool", toolName: "read" }, providerRecovery: { mode: "bounded_foreground", budgetMs: 60_000 } };

export async function use(signal: AbortSignalLike): Promise<number> {
  const service = createChatService(config, { models: [{ id: "m", api: "openai-completions", provider: "openai-compatible" }] });
  let n = 0;
  try {
    for await (const chunk of service.streamChat(messages, tools, signal, options)) {
      const c: StreamChunk = chunk;
      if (c.providerRetry?.phase === "scheduled") n += c.providerRetry.delayMs ?? 0;
      if (c.usage) n += c.usage.costUsd;
    }
  } catch (error) {
    if (error instanceof StreamIdleTimeoutError) n += error.timeoutMs;
    if (replayBoundaryCrossed(error)) n += 1;
    if (classifyProviderRetry(error).retryable) n += 1;
  }
  const async = await createChatServiceAsync(config);
  const response = await async.chat(messages);
  n += response.content.length;
  // @ts-expect-error finish reasons are pi-ai's, not OpenAI's
  const bad: StreamChunk = { finishReason: "tool_calls" };
  void bad;
  return n;
}

const names: readonly GrammarName[] = GRAMMAR_NAMES;
export const leaks = parseToolGrammarLeaks("text", names).map((c) => c.grammar);
export const gated = modelLeaksGrammar("glm-4.6");
export const recovered = recoverGrammarLeaks(
  { role: "assistant", stopReason: "stop", content: [{ type: "text", text: "x" }] },
  { mode: "recover", knownTools: new Set(["read"]), unknownToolText: "strip" },
).promotedCallIds;
// @ts-expect-error not a recovery mode
recoverGrammarLeaks({ role: "assistant", content: [] }, { mode: "promote", knownTools: new Set() });
