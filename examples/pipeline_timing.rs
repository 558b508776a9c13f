// Times the Rust side of runRepairPipeline alone (no N-API), for profiling the boundary split.
use pi_native::repair::config::{parse_legacy, parse_preprocessors};
use pi_native::repair::envelope::Limits;
use pi_native::repair::host::NoHost;
use pi_native::repair::json;
use pi_native::repair::pipeline::{run_repair_pipeline, PipelineConfig};
use pi_native::repair::schema::Schema;
use pi_native::repair::tables::builtin_tables_json;

fn main() {
  let tables = json::parse(&builtin_tables_json()).unwrap();
  let read = tables.get_key("read").unwrap();
  let pres = parse_preprocessors(read.get_key("preprocessors").unwrap());
  let legacy = parse_legacy(read.get_key("legacyConfig").unwrap());
  let schema = Schema::compile(&json::parse(r#"{"~kind":"Object","type":"object","required":["path"],"properties":{"path":{"~kind":"String","type":"string"},"offset":{"~kind":"Number","type":"number","~optional":true},"limit":{"~kind":"Number","type":"number","~optional":true}}}"#).unwrap()).unwrap();
  for text in [
    r#""{\"path\":\"src/a.ts\",\"limit\":\"5\"}""#,
    r#"{"path":"src/a.ts","offset":10,"limit":50}"#,
    r#"{"file_path":"src/a.ts","offset":null}"#,
  ] {
    let cfg = PipelineConfig {
      tool_name: "read",
      schema: &schema,
      allow_truncated_envelope_completion: true,
      allow_valid_value_transforms: true,
      preprocessors: &pres,
      family_match: &[],
      legacy: &legacy,
      has_owner_shim: false,
      limits: Limits::default(),
      input_bytes_hint: Some(text.len() as f64),
    };
    let n = 200_000;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      let input = json::parse(text).unwrap();
      let r = run_repair_pipeline(&input, &cfg, &mut NoHost).unwrap();
      std::hint::black_box(r);
    }
    println!("{text}: {:.2} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      std::hint::black_box(json::parse(text).unwrap());
    }
    println!("  parse only: {:.2} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    let input = json::parse(text).unwrap();
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      std::hint::black_box(schema.check(&input));
    }
    println!("  check only: {:.2} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      std::hint::black_box(pi_native::repair::envelope::recover_envelope(&input, &Limits::default()).unwrap());
    }
    println!("  envelope only: {:.2} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    let t0 = std::time::Instant::now();
    for _ in 0..n {
      std::hint::black_box(schema.convert(input.clone()).unwrap());
    }
    println!("  clone+convert: {:.2} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
  }
}
