//! Recorded cases: each input with the result the reference implementation (0.4.3) produced for
//! it, serialised the way `JSON.stringify` writes it. Promoted call ids use `now_ms`.

use super::{ParseCase, RecoverCase, NOW};

pub const CONFORMANCE_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "conf_mistral_v3",
    text: "ok [TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}] done",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "conf_mistral_v11",
    text: "[TOOL_CALLS]read[CALL_ID]abc123[ARGS]{\"path\":\"a\"}",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "conf_minimax_text",
    text: "<function_call>```typescript\nfunctions.read({\"path\":\"a\"})\n```",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"minimax-text"}]"#,
  },
  ParseCase {
    id: "conf_invoke_wrapped",
    text: "<minimax:tool_call><invoke name=\"read\"><parameter name=\"path\">a</parameter><parameter name=\"limit\">5</parameter></invoke></minimax:tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a","limit":5},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "conf_granite",
    text: "<tool_call>[{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "conf_granite_bare_pythonic",
    text: "Sure.\nread(path=\"a\", limit=5)",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"read","arguments":{"path":"a","limit":5},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "conf_bare_json_llama",
    text: "{\"name\": \"read\", \"parameters\": {\"path\": \"a\"}}",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"llama"}]"#,
  },
];

pub const CONFORMANCE_RECOVER: &[RecoverCase] = &[
  RecoverCase {
    id: "conf_recover_glm",
    message: r#"{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"Reading.\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>"}]}"#,
    mode: "recover",
    known_tools: &["read"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: 1_795_994_808_857.0,
    expected: r#"{"changed":true,"recoveredCalls":[{"name":"read","arguments":{"path":"a.ts"},"grammar":"glm"}],"strippedGrammars":["glm"],"strippedRanges":1,"promoted":true,"observed":true,"detectedGrammars":["glm"],"detectedRanges":1,"promotedCallIds":["tool_repair_glm_mx2gxrmh_0"],"message":{"role":"assistant","stopReason":"toolUse","content":[{"type":"text","text":"Reading."},{"type":"toolCall","id":"tool_repair_glm_mx2gxrmh_0","name":"read","arguments":{"path":"a.ts"}}]},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "conf_observe",
    message: r#"{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>"}]}"#,
    mode: "observe",
    known_tools: &["read"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":true,"detectedGrammars":["glm"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n</tool_call>"}]},"messageIsInput":true}"#,
  },
];

pub const REFERENCE_SUITE_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "ref_dsml_variants",
    text: "\n<｜｜DSML｜｜tool_calls>\n<｜｜DSML｜｜invoke name=\"code_exec\">\n<｜｜DSML｜｜parameter name=\"language\" string=\"true\">python</｜｜DSML｜｜parameter>\n</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"fetch\">\n<｜DSML｜parameter name=\"url\" string=\"false\">[\"x\"]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
    grammars: Some(&["dsml"]),
    expected: r#"[{"name":"code_exec","arguments":{"language":"python"},"grammar":"dsml"},{"name":"fetch","arguments":{"url":["x"]},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "ref_qwen",
    text: "<tool_call>\n<function=get_weather>\n<parameter=location>Paris</parameter>\n</function>\n</tool_call>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"get_weather","arguments":{"location":"Paris"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "ref_kimi",
    text: "<|tool_calls_section_begin|><|tool_call_begin|>functions.web_search:0<|tool_call_argument_begin|>{\"query\":\"pi\"}<|tool_call_end|><|tool_calls_section_end|>",
    grammars: Some(&["kimi"]),
    expected: r#"[{"name":"web_search","arguments":{"query":"pi"},"grammar":"kimi"}]"#,
  },
  ParseCase {
    id: "ref_glm",
    text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"get_weather","arguments":{"city":"Beijing"},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "ref_llama",
    text: "<|python_tag|>{\"name\":\"write_file\",\"arguments\":{\"path\":\"/data/a\",\"content\":\"x\"}}",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"write_file","arguments":{"path":"/data/a","content":"x"},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "ref_olmo",
    text: "<function_calls>\nwrite_file(path=\"/data/a\", content=\"hello\", overwrite=True)\n</function_calls>",
    grammars: Some(&["olmo"]),
    expected: r#"[{"name":"write_file","arguments":{"path":"/data/a","content":"hello","overwrite":true},"grammar":"olmo"}]"#,
  },
  ParseCase {
    id: "ref_fenced_granite",
    text: "```xml\n<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>\n```",
    grammars: Some(&["granite"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "ref_dangling_dsml",
    text: "I'll read.\n<｜DSML｜tool_calls",
    grammars: Some(&["dsml"]),
    expected: r#"[]"#,
  },
];

pub const REFERENCE_SUITE_RECOVER: &[RecoverCase] = &[
  RecoverCase {
    id: "ref_recover_dsml",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"I'll use the tool.\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">pwd</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[{"name":"bash","arguments":{"command":"pwd"},"grammar":"dsml"}],"strippedGrammars":["dsml"],"strippedRanges":1,"promoted":true,"observed":true,"detectedGrammars":["dsml"],"detectedRanges":1,"promotedCallIds":["tool_repair_dsml_loyw3v5n_0"],"message":{"role":"assistant","content":[{"type":"text","text":"I'll use the tool."},{"type":"toolCall","id":"tool_repair_dsml_loyw3v5n_0","name":"bash","arguments":{"command":"pwd"}}],"stopReason":"toolUse"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_length_gate",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"I'll use the tool.\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">pwd</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"}],"stopReason":"length"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["dsml"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["dsml"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"I'll use the tool."}],"stopReason":"length"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_strip_mode",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"}"#,
    mode: "strip",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["qwen"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["qwen"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":""}],"stopReason":"stop"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_off_mode",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"}"#,
    mode: "off",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":false,"detectedGrammars":[],"detectedRanges":0,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "ref_unknown_preserved",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>{\"name\":\"unknown\",\"arguments\":{\"x\":1}}</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":true,"detectedGrammars":["granite"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"<tool_call>{\"name\":\"unknown\",\"arguments\":{\"x\":1}}</tool_call>"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "ref_unknown_stripped",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>{\"name\":\"unknown\",\"arguments\":{\"x\":1}}</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: true,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["granite"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["granite"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":""}],"stopReason":"stop"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_observe_identity",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"}"#,
    mode: "observe",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":true,"detectedGrammars":["qwen"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "ref_empty_args",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>write</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["write"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["glm"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["glm"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":""}],"stopReason":"stop"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_existing_toolcall",
    message: r#"{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>ls</parameter>\n</function>\n</tool_call>"},{"type":"toolCall","id":"real-1","name":"bash","arguments":{"command":"pwd"}}]}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["qwen"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["qwen"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":""},{"type":"toolCall","id":"real-1","name":"bash","arguments":{"command":"pwd"}}]},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "ref_fenced_not_leak",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"```\n<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>\n```"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":false,"detectedGrammars":[],"detectedRanges":0,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"```\n<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>\n```"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
];

pub const DSML_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "dsml_ascii_bars_unclosed",
    text: "Run:\n< | DSML | tool_calls>\n<| DSML |invoke name=\"bash\">\n<|DSML|parameter name=\"command\">ls -la</|DSML|parameter>\n</|DSML|invoke>\n<|DSML|invoke name=\"read\"><|DSML|parameter name=\"path\" string=\"false\">{\"p\": 1}</|DSML|parameter></|DSML|invoke>\ntrailing",
    grammars: None,
    expected: r#"[{"name":"bash","arguments":{"command":"ls -la"},"grammar":"dsml"},{"name":"read","arguments":{"path":{"p":1}},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "dsml_function_calls_json_body",
    text: "<DSML｜function_calls><DSML｜invoke name=\"read\">{\"arguments\": {\"path\": \"a\"}}</DSML｜invoke><DSML｜invoke name=\"noop\"></DSML｜invoke></DSML｜function_calls>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"dsml"},{"name":"noop","arguments":{},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "dsml_unicode_fold",
    text: "<｜d\u{17f}ml｜TOOL_CALLS><｜DSML｜invo\u{212a}e name=\"bash\"><｜DSML｜parameter name=\"command\" string=\"FALSE\"> {\"a\":1} </｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>",
    grammars: None,
    expected: r#"[{"name":"bash","arguments":{"command":" {\"a\":1} "},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "dsml_fenced",
    text: "```\n<｜DSML｜tool_calls><｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\">pwd</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>\n```",
    grammars: None,
    expected: r#"[]"#,
  },
];

pub const DSML_RECOVER: &[RecoverCase] = &[RecoverCase {
  id: "dangling_strip_only",
  message: r#"{"role":"assistant","content":[{"type":"text","text":"Reading now.\n<｜DSML｜tool_calls"}],"stopReason":"stop"}"#,
  mode: "recover",
  known_tools: &["read"],
  grammars: None,
  require_known_tool: true,
  unknown_tool_text_strip: false,
  now_ms: NOW,
  expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["dsml"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["dsml"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"Reading now."}],"stopReason":"stop"},"messageIsInput":false}"#,
}];

pub const KIMI_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "kimi_multi_relaxed",
    text: "<|tool_call_section_begin|> <|tool_call_begin|> call_1 <|tool_call_argument_begin|>{\"q\":1}<|tool_call_end|><|tool_call_begin|>bash:3<|tool_call_argument_begin|>not json<|tool_call_end|><|tool_call_begin|>functions.read:7<|tool_call_argument_begin|> {\"path\":\"k\"} <|tool_call_end|><|TOOL_CALL_SECTION_END|>",
    grammars: None,
    expected: r#"[{"name":"bash","arguments":{},"grammar":"kimi"},{"name":"read","arguments":{"path":"k"},"grammar":"kimi"}]"#,
  },
];

pub const MISTRAL_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "mistral_mixed_items",
    text: "ok [TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}, {\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}, 3, {\"nope\":1}] done",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"},{"name":"bash","arguments":{"command":"ls"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "mistral_v11_spaced",
    text: "[TOOL_CALLS]  write[CALL_ID][ARGS] {\"arguments\":{\"path\":\"b\",\"content\":\"x\"}} tail",
    grammars: None,
    expected: r#"[{"name":"write","arguments":{"path":"b","content":"x"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "mistral_no_payload",
    text: "[TOOL_CALLS] nothing here",
    grammars: None,
    expected: r#"[]"#,
  },
  ParseCase {
    id: "mistral_bare_function_objects",
    text: "Calls: [{\"function\": {\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"pwd\\\"}\"}}, {\"function_name\": \"grep\", \"args\": {\"pattern\": \"x\"}}]",
    grammars: Some(&["mistral"]),
    expected: r#"[{"name":"bash","arguments":{"command":"pwd"},"grammar":"mistral"},{"name":"grep","arguments":{"pattern":"x"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "mistral_fenced",
    text: "```\n[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]\n```",
    grammars: Some(&["mistral"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "mistral_two_markers",
    text: "[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]\n[TOOL_CALLS]bash[CALL_ID]x[ARGS]{\"command\":\"ls\"}",
    grammars: Some(&["mistral"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"},{"name":"bash","arguments":{"command":"ls"},"grammar":"mistral"}]"#,
  },
];

pub const MINIMAX_TEXT_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "minimax_upper_no_fence",
    text: "<FUNCTION_CALL> please functions.bash ( {\"arguments\": \"{\\\"command\\\":\\\"ls\\\"}\"} ) done",
    grammars: Some(&["minimax-text"]),
    expected: r#"[{"name":"bash","arguments":{"command":"ls"},"grammar":"minimax-text"}]"#,
  },
  ParseCase {
    id: "minimax_two",
    text: "<function_call>\nfunctions.read({\"path\":\"a\"})\n</function_call>\n<function_call>\nfunctions.bash({\"command\":\"ls\"})\n```",
    grammars: Some(&["minimax-text"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"minimax-text"}]"#,
  },
];

pub const MINIMAX_TEXT_RECOVER: &[RecoverCase] = &[RecoverCase {
  id: "minimax_id",
  message: r#"{"role":"assistant","content":[{"type":"text","text":"<function_call>```typescript\nfunctions.read({\"path\":\"a\"})\n```"}],"stopReason":"stop"}"#,
  mode: "recover",
  known_tools: &["read"],
  grammars: None,
  require_known_tool: true,
  unknown_tool_text_strip: false,
  now_ms: NOW,
  expected: r#"{"changed":true,"recoveredCalls":[{"name":"read","arguments":{"path":"a"},"grammar":"minimax-text"}],"strippedGrammars":["minimax-text"],"strippedRanges":1,"promoted":true,"observed":true,"detectedGrammars":["minimax-text"],"detectedRanges":1,"promotedCallIds":["tool_repair_minimax_text_loyw3v5n_0"],"message":{"role":"assistant","content":[{"type":"text","text":""},{"type":"toolCall","id":"tool_repair_minimax_text_loyw3v5n_0","name":"read","arguments":{"path":"a"}}],"stopReason":"toolUse"},"messageIsInput":false}"#,
}];

pub const INVOKE_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "invoke_standalone_values",
    text: "<invoke name=\"grep\">\n<parameter name=\"pattern\">  \"quoted\"  </parameter>\n<parameter name=\"n\">42</parameter>\n<parameter name=\"flags\">[1, 2]</parameter>\n<parameter name=\"raw\" string=\"false\">not json</parameter>\n<parameter name=\"__proto__\">{\"polluted\":true}</parameter>\n</invoke>",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"grep","arguments":{"pattern":"quoted","n":42,"flags":[1,2],"raw":"not json"},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "invoke_json_body",
    text: "<invoke name=\"read\">{\"path\":\"x.ts\"}</invoke>",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"read","arguments":{"path":"x.ts"},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "invoke_malformed",
    text: "invoke name=\"read\">\nparameter name=\"path\">/data/a parameter>\nparameter name=\"limit\">10 parameter>\n/invoke>\nafter",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"/data/a","limit":10},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "invoke_malformed_to_end",
    text: "Text\n  invoke name=\"bash\">\n  parameter name=\"command\">echo hi parameter>",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"bash","arguments":{"command":"echo hi"},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "invoke_two_in_wrapper",
    text: "Doing both.\n<minimax:tool_call>\n<invoke name=\"read\">\n<parameter name=\"path\">a.ts</parameter>\n</invoke>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>\n</minimax:tool_call>\nDone.",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"read","arguments":{"path":"a.ts"},"grammar":"invoke"},{"name":"bash","arguments":{"command":"ls"},"grammar":"invoke"}]"#,
  },
];

pub const QWEN_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "qwen_values",
    text: "<tool_call>\n<function=get_weather>\n<parameter=location>Paris</parameter>\n<parameter=days>3</parameter>\n<parameter=opts>{\"units\":\"c\"}</parameter>\n<parameter=flag>true</parameter>\n</function>\n</tool_call>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"get_weather","arguments":{"location":"Paris","days":3,"opts":{"units":"c"},"flag":true},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "qwen_bare_function",
    text: "Use this: <function=bash>\n<parameter=command>ls -la</parameter>\n</function> ok",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"bash","arguments":{"command":"ls -la"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "qwen_tools_wrapper",
    text: "<tools>{\"name\":\"read\",\"arguments\":{\"path\":\"t\"}}</tools>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"t"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "qwen_fenced_json_body",
    text: "<tool_call>\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"pwd\"}}\n```\n</tool_call>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"bash","arguments":{"command":"pwd"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "qwen_two_functions",
    text: "<tool_call>\n<function=read>\n<parameter=path>a</parameter>\n</function>\n<function=bash>\n<parameter=command>ls</parameter>\n</function>\n</tool_call>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"},{"name":"bash","arguments":{"command":"ls"},"grammar":"qwen"}]"#,
  },
];

pub const GLM_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "glm_multi",
    text: "<tool_call>edit\n<arg_key>path</arg_key>\n<arg_value>a.ts</arg_value>\n<arg_key>count</arg_key>\n<arg_value>2</arg_value>\n<arg_key>extra</arg_key>\n</tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"edit","arguments":{"path":"a.ts","count":2,"extra":""},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "glm_blank_key",
    text: "<tool_call>read <arg_key> </arg_key><arg_value>x</arg_value><arg_key>path</arg_key><arg_value>\"q\"</arg_value></tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"read","arguments":{"path":"x"},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "glm_empty",
    text: "<tool_call>write</tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"write","arguments":{},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "glm_two_wrappers",
    text: "First <tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n</tool_call> then <tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls</arg_value>\n</tool_call>.",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"glm"},{"name":"bash","arguments":{"command":"ls"},"grammar":"glm"}]"#,
  },
];

pub const GRANITE_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "granite_pythonic_values",
    text: "Plan:\n  bash(command='ls -la', timeout=None, verbose=True, ratio=-1.5, extra=[True, None], obj={\"a\": False}, weird=foo bar, =x, 9=y)",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"bash","arguments":{"command":"ls -la","timeout":null,"verbose":true,"ratio":-1.5,"extra":[true,null],"obj":{"a":false},"weird":"foo bar"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "granite_quotes",
    text: "write_file(path=\"/data/a\", content=\"he said \\\"hi\\\", it's\", overwrite=False)",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"write_file","arguments":{"path":"/data/a","content":"he said \"hi\", it's","overwrite":false},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "granite_two_lines",
    text: "I will run:\nread(path=\"a\")\n  bash(command=\"ls\", timeout=5)\nnot_a_call (x=1) trailing",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"},{"name":"bash","arguments":{"command":"ls","timeout":5},"grammar":"granite"},{"name":"not_a_call","arguments":{"x":1},"grammar":"granite"}]"#,
  },
];

pub const LLAMA_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "llama_pythonic",
    text: "<|python_tag|> brave_search.call(query=\"pi\", n=3)\nnext line",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"brave_search.call","arguments":{"query":"pi","n":3},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "llama_array",
    text: "<|python_tag|>[{\"name\":\"a\",\"parameters\":{\"k\":1}},{\"name\":\"b\",\"parameters\":{\"k\":2}}]",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"a","arguments":{"k":1},"grammar":"llama"},{"name":"b","arguments":{"k":2},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "llama_two_tags",
    text: "<|python_tag|>{\"name\":\"read\",\"parameters\":{\"path\":\"a\"}}\n<|python_tag|>bash(command=\"ls\")",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"llama"},{"name":"bash","arguments":{"command":"ls"},"grammar":"llama"}]"#,
  },
];

pub const OLMO_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "olmo_multi",
    text: "<function_calls>\nwrite_file(path=\"/data/a\", content=\"hello\", overwrite=True)\nread(path=\"/data/a\")\n  ls()\n</function_calls>",
    grammars: Some(&["olmo"]),
    expected: r#"[{"name":"write_file","arguments":{"path":"/data/a","content":"hello","overwrite":true},"grammar":"olmo"},{"name":"read","arguments":{"path":"/data/a"},"grammar":"olmo"},{"name":"ls","arguments":{},"grammar":"olmo"}]"#,
  },
  ParseCase {
    id: "olmo_fenced",
    text: "```\n<function_calls>\nread(path=\"/data/a\")\n</function_calls>\n```",
    grammars: Some(&["olmo"]),
    expected: r#"[]"#,
  },
];

pub const MIXED_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "all_mix",
    text: "Intro 😀 text.\n<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call>\nthen <|python_tag|>{\"name\":\"bash\",\"arguments\":{\"command\":\"x\"}}\n<function_calls>\nls(dir=\".\")\n</function_calls>\nBye.",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"},{"name":"bash","arguments":{"command":"x"},"grammar":"llama"},{"name":"ls","arguments":{"dir":"."},"grammar":"olmo"}]"#,
  },
  ParseCase {
    id: "all_two_tool_calls",
    text: "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call><tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"b\"}}</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"},{"name":"bash","arguments":{"command":"b"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "all_key_order",
    text: "<tool_call>{\"name\":\"read\",\"arguments\":{\"2\":\"b\",\"1\":\"a\",\"z\":0,\"__proto__\":{\"p\":1}}}</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"1":"a","2":"b","z":0,"__proto__":{"p":1}},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "all_lone_surrogate",
    text: "<tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"\\ud800x\"}}</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"\ud800x"},"grammar":"granite"}]"#,
  },
];

pub const FOLDING_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "fold_upper_wrapper",
    text: "<TOOL_CALL>{\"name\":\"read\",\"arguments\":{\"path\":\"upper\"}}</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"upper"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "fold_long_s_wrapper",
    text: "<tool\u{17f}>{\"name\":\"read\",\"arguments\":{\"p\":1}}</tool\u{17f}>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"p":1},"grammar":"mistral"},{"name":"read","arguments":{"p":1},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "fold_backref_mismatch",
    text: "<tool_call>{\"name\":\"read\",\"arguments\":{\"p\":1}}</tool_call> then <tools>x</tool_call>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"p":1},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "fold_backref_tools_upper",
    text: "<tools>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</TOOLS>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "fold_backref_crossed",
    text: "<tools>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call> and <tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tools>",
    grammars: Some(&["qwen", "granite"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "fold_kelvin_name",
    text: "<function=rea\u{212a}>\n<parameter=path>a</parameter>\n</function>",
    grammars: None,
    expected: r#"[]"#,
  },
  ParseCase {
    id: "fold_dotless_i",
    text: "<funct\u{131}on_calls>\nread(path=\"a\")\n</funct\u{131}on_calls>",
    grammars: None,
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "fold_long_s_glm",
    text: "<tool_call>\u{17f}ead\n<arg_key>path</arg_key><arg_value>a</arg_value></tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[]"#,
  },
];

pub const OFFSETS_PARSE: &[ParseCase] = &[ParseCase {
  id: "astral_prefix",
  text: "😀😀 é <tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call> ü 🚀",
  grammars: None,
  expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"}]"#,
}];

pub const OFFSETS_RECOVER: &[RecoverCase] = &[RecoverCase {
  id: "astral_strip",
  message: r#"{"role":"assistant","content":[{"type":"text","text":"😀😀 é <tool_call>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}</tool_call> ü 🚀"}],"stopReason":"stop"}"#,
  mode: "strip",
  known_tools: &["read"],
  grammars: None,
  require_known_tool: true,
  unknown_tool_text_strip: false,
  now_ms: NOW,
  expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["granite"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["granite"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"😀😀 é  ü 🚀"}],"stopReason":"stop"},"messageIsInput":false}"#,
}];

pub const FENCES_PARSE: &[ParseCase] = &[
  ParseCase {
    id: "fenced_dsml",
    text: "Example:\n```\n<｜DSML｜tool_calls><｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\">pwd</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>\n```\nThat is all.",
    grammars: Some(&["dsml"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_dsml",
    text: "Example:\n<｜DSML｜tool_calls><｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\">pwd</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>\nThat is all.",
    grammars: Some(&["dsml"]),
    expected: r#"[{"name":"bash","arguments":{"command":"pwd"},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "after_fence_dsml",
    text: "```js\nx()\n```\n<｜DSML｜tool_calls><｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\">pwd</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>",
    grammars: Some(&["dsml"]),
    expected: r#"[{"name":"bash","arguments":{"command":"pwd"},"grammar":"dsml"}]"#,
  },
  ParseCase {
    id: "fenced_kimi",
    text: "Example:\n```\n<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\":\"a\"}<|tool_call_end|><|tool_calls_section_end|>\n```\nThat is all.",
    grammars: Some(&["kimi"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_kimi",
    text: "Example:\n<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\":\"a\"}<|tool_call_end|><|tool_calls_section_end|>\nThat is all.",
    grammars: Some(&["kimi"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"kimi"}]"#,
  },
  ParseCase {
    id: "after_fence_kimi",
    text: "```js\nx()\n```\n<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{\"path\":\"a\"}<|tool_call_end|><|tool_calls_section_end|>",
    grammars: Some(&["kimi"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"kimi"}]"#,
  },
  ParseCase {
    id: "fenced_mistral",
    text: "Example:\n```\n[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]\n```\nThat is all.",
    grammars: Some(&["mistral"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_mistral",
    text: "Example:\n[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]\nThat is all.",
    grammars: Some(&["mistral"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "after_fence_mistral",
    text: "```js\nx()\n```\n[TOOL_CALLS] [{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}]",
    grammars: Some(&["mistral"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"mistral"}]"#,
  },
  ParseCase {
    id: "fenced_minimax_text",
    text: "Example:\n```\n<function_call>\nfunctions.read({\"path\":\"a\"})\n```\nThat is all.",
    grammars: Some(&["minimax-text"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_minimax_text",
    text: "Example:\n<function_call>\nfunctions.read({\"path\":\"a\"})\nThat is all.",
    grammars: Some(&["minimax-text"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"minimax-text"}]"#,
  },
  ParseCase {
    id: "after_fence_minimax_text",
    text: "```js\nx()\n```\n<function_call>\nfunctions.read({\"path\":\"a\"})",
    grammars: Some(&["minimax-text"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"minimax-text"}]"#,
  },
  ParseCase {
    id: "fenced_invoke",
    text: "Example:\n```\n<minimax:tool_call><invoke name=\"read\"><parameter name=\"path\">a</parameter></invoke></minimax:tool_call>\n```\nThat is all.",
    grammars: Some(&["invoke"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_invoke",
    text: "Example:\n<minimax:tool_call><invoke name=\"read\"><parameter name=\"path\">a</parameter></invoke></minimax:tool_call>\nThat is all.",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "after_fence_invoke",
    text: "```js\nx()\n```\n<minimax:tool_call><invoke name=\"read\"><parameter name=\"path\">a</parameter></invoke></minimax:tool_call>",
    grammars: Some(&["invoke"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"invoke"}]"#,
  },
  ParseCase {
    id: "fenced_qwen",
    text: "Example:\n```\n<tool_call>\n<function=read>\n<parameter=path>a</parameter>\n</function>\n</tool_call>\n```\nThat is all.",
    grammars: Some(&["qwen"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_qwen",
    text: "Example:\n<tool_call>\n<function=read>\n<parameter=path>a</parameter>\n</function>\n</tool_call>\nThat is all.",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "after_fence_qwen",
    text: "```js\nx()\n```\n<tool_call>\n<function=read>\n<parameter=path>a</parameter>\n</function>\n</tool_call>",
    grammars: Some(&["qwen"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"qwen"}]"#,
  },
  ParseCase {
    id: "fenced_glm",
    text: "Example:\n```\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n</tool_call>\n```\nThat is all.",
    grammars: Some(&["glm"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_glm",
    text: "Example:\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n</tool_call>\nThat is all.",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "after_fence_glm",
    text: "```js\nx()\n```\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n</tool_call>",
    grammars: Some(&["glm"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"glm"}]"#,
  },
  ParseCase {
    id: "fenced_granite",
    text: "Example:\n```\nread(path=\"a\")\n```\nThat is all.",
    grammars: Some(&["granite"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_granite",
    text: "Example:\nread(path=\"a\")\nThat is all.",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "after_fence_granite",
    text: "```js\nx()\n```\nread(path=\"a\")",
    grammars: Some(&["granite"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"granite"}]"#,
  },
  ParseCase {
    id: "fenced_llama",
    text: "Example:\n```\n<|python_tag|>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}\n```\nThat is all.",
    grammars: Some(&["llama"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_llama",
    text: "Example:\n<|python_tag|>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}\nThat is all.",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "after_fence_llama",
    text: "```js\nx()\n```\n<|python_tag|>{\"name\":\"read\",\"arguments\":{\"path\":\"a\"}}",
    grammars: Some(&["llama"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"llama"}]"#,
  },
  ParseCase {
    id: "fenced_olmo",
    text: "Example:\n```\n<function_calls>\nread(path=\"a\")\n</function_calls>\n```\nThat is all.",
    grammars: Some(&["olmo"]),
    expected: r#"[]"#,
  },
  ParseCase {
    id: "unfenced_olmo",
    text: "Example:\n<function_calls>\nread(path=\"a\")\n</function_calls>\nThat is all.",
    grammars: Some(&["olmo"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"olmo"}]"#,
  },
  ParseCase {
    id: "after_fence_olmo",
    text: "```js\nx()\n```\n<function_calls>\nread(path=\"a\")\n</function_calls>",
    grammars: Some(&["olmo"]),
    expected: r#"[{"name":"read","arguments":{"path":"a"},"grammar":"olmo"}]"#,
  },
];

pub const GATES_RECOVER: &[RecoverCase] = &[
  RecoverCase {
    id: "gate_user_role",
    message: r#"{"role":"user","stopReason":"stop","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}]}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":false,"detectedGrammars":[],"detectedRanges":0,"promotedCallIds":[],"message":{"role":"user","stopReason":"stop","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}]},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "gate_content_not_array",
    message: r#"{"role":"assistant","stopReason":"stop","content":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":false,"detectedGrammars":[],"detectedRanges":0,"promotedCallIds":[],"message":{"role":"assistant","stopReason":"stop","content":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "gate_no_known_tools",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &[],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":true,"detectedGrammars":["qwen"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "gate_require_known_off",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>{\"name\":\"anything\",\"arguments\":{\"x\":1}}</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &[],
    grammars: None,
    require_known_tool: false,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[{"name":"anything","arguments":{"x":1},"grammar":"granite"}],"strippedGrammars":["granite"],"strippedRanges":1,"promoted":true,"observed":true,"detectedGrammars":["granite"],"detectedRanges":1,"promotedCallIds":["tool_repair_granite_loyw3v5n_0"],"message":{"role":"assistant","content":[{"type":"text","text":""},{"type":"toolCall","id":"tool_repair_granite_loyw3v5n_0","name":"anything","arguments":{"x":1}}],"stopReason":"toolUse"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "gate_stop_tooluse",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"toolUse"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[],"strippedGrammars":["qwen"],"strippedRanges":1,"promoted":false,"observed":true,"detectedGrammars":["qwen"],"detectedRanges":1,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":""}],"stopReason":"toolUse"},"messageIsInput":false}"#,
  },
  RecoverCase {
    id: "gate_grammar_filter",
    message: r#"{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"}"#,
    mode: "recover",
    known_tools: &["bash"],
    grammars: Some(&["glm", "olmo"]),
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":false,"recoveredCalls":[],"strippedGrammars":[],"strippedRanges":0,"promoted":false,"observed":false,"detectedGrammars":[],"detectedRanges":0,"promotedCallIds":[],"message":{"role":"assistant","content":[{"type":"text","text":"<tool_call>\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>\n</tool_call>"}],"stopReason":"stop"},"messageIsInput":true}"#,
  },
  RecoverCase {
    id: "multi_parts",
    message: r#"{"role":"assistant","api":"x","stopReason":"stop","content":[{"type":"thinking","thinking":"Plan 😀\n<function_calls>\nread(path=\"a\")\n</function_calls>\n\n\n\nmore","sig":"s"},{"type":"image","data":"..."},{"type":"text","text":"Intro.   \n<tool_call>{\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}</tool_call>\t \nunknown: <tool_call>{\"name\":\"nope\",\"arguments\":{\"a\":1}}</tool_call>\n\n\n\nEnd.","extra":1},{"type":"text","text":"stray <｜DSML｜invoke name=\"x\"> marker"},{"type":"text","text":"<|python_tag|>{\"name\":\"minimax-tool\",\"arguments\":{\"q\":1}}"}],"usage":{"n":1}}"#,
    mode: "recover",
    known_tools: &["read", "bash", "minimax-tool"],
    grammars: None,
    require_known_tool: true,
    unknown_tool_text_strip: false,
    now_ms: NOW,
    expected: r#"{"changed":true,"recoveredCalls":[{"name":"read","arguments":{"path":"a"},"grammar":"olmo"},{"name":"bash","arguments":{"command":"ls"},"grammar":"granite"},{"name":"minimax-tool","arguments":{"q":1},"grammar":"llama"}],"strippedGrammars":["olmo","granite","dsml","llama"],"strippedRanges":4,"promoted":true,"observed":true,"detectedGrammars":["olmo","granite","dsml","llama"],"detectedRanges":5,"promotedCallIds":["tool_repair_olmo_loyw3v5n_0","tool_repair_granite_loyw3v5n_1","tool_repair_llama_loyw3v5n_2"],"message":{"role":"assistant","api":"x","stopReason":"toolUse","content":[{"type":"thinking","thinking":"Plan 😀\n\nmore","sig":"s"},{"type":"image","data":"..."},{"type":"text","text":"Intro.\n\nunknown: <tool_call>{\"name\":\"nope\",\"arguments\":{\"a\":1}}</tool_call>\n\nEnd.","extra":1},{"type":"text","text":"stray  marker"},{"type":"text","text":""},{"type":"toolCall","id":"tool_repair_olmo_loyw3v5n_0","name":"read","arguments":{"path":"a"}},{"type":"toolCall","id":"tool_repair_granite_loyw3v5n_1","name":"bash","arguments":{"command":"ls"}},{"type":"toolCall","id":"tool_repair_llama_loyw3v5n_2","name":"minimax-tool","arguments":{"q":1}}],"usage":{"n":1}},"messageIsInput":false}"#,
  },
];
