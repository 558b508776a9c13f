#![no_main]
// Body and input layout: `pi_native::fuzzing::schema` (src/fuzzing.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| pi_native::fuzzing::schema(data));
