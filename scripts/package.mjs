#!/usr/bin/env node
// npm run package [-- <platform>... | host] [--no-build] [--out <dir>]
//
// Builds the native addon for each platform (default: every napi target in package.json) and writes
// one npm tarball per package into pack/: the main package pi-native (JavaScript only, with
// optionalDependencies naming every platform package at the same version) and one
// pi-native-<platform> package per platform built (its .node file, package.json, README, LICENSE).
//
//   host          only the platform of this machine (what "build from source" needs)
//   <platform>    a napi platform name: linux-x64-gnu, linux-arm64-gnu, linux-x64-musl,
//                 linux-arm64-musl, win32-x64-msvc, ...
//   --no-build    do not compile: take <binaryName>.<platform>.node from the package root (as left by
//                 `napi build --platform`, e.g. by `npm test`)
//   --out <dir>   where the tarballs go (default: pack/)
//
// Cross builds use cargo-zigbuild (PyPI: `pip install ziglang cargo-zigbuild`) plus
// `rustup target add <triple>`: Linux glibc targets link against glibc 2.17, musl targets as a
// dynamic library (-crt-static), win32-x64-msvc is built with the x86_64-pc-windows-gnu target and
// MinGW-w64's GCC (apt-get install mingw-w64) when the host is not Windows (the addon only talks to
// Node through N-API's C ABI, so it loads in the official MSVC-built node.exe). Honours
// CARGO_TARGET_DIR; prints a summary table at the end and exits non-zero if any requested platform
// failed.
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const binaryName = manifest.napi.binaryName
const version = manifest.version
const repository = 'https://github.com/pi-native/pi-native'

// napi platform name -> how to build it.
const ARCH = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }
function platformOfTriple(triple) {
  const [cpu, , sys, abi] = triple.split('-')
  const arch = ARCH[cpu]
  if (triple.includes('-apple-darwin')) return `darwin-${arch}`
  if (sys === 'windows') return `win32-${arch}-${abi}`
  return `linux-${arch}-${abi}`
}

function hostPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') {
    let musl = false
    try {
      musl = readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
    } catch {
      musl = !process.report?.getReport?.()?.header?.glibcVersionRuntime
    }
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function hostTriple() {
  const out = spawnSync('rustc', ['-vV'], { encoding: 'utf8' })
  const line = (out.stdout ?? '').split('\n').find((l) => l.startsWith('host: '))
  return line ? line.slice(6).trim() : undefined
}

// ---- arguments
const args = process.argv.slice(2)
let build = true
let out = join(root, 'pack')
const wanted = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--no-build') build = false
  else if (args[i] === '--out') out = resolve(args[++i])
  else if (args[i] === '-h' || args[i] === '--help') {
    console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 22).join('\n'))
    process.exit(0)
  } else wanted.push(args[i])
}

const targets = new Map(manifest.napi.targets.map((triple) => [platformOfTriple(triple), triple]))
const host = hostPlatform()
const selected = wanted.length === 0 ? [...targets.keys()] : wanted.map((w) => (w === 'host' ? host : w))
for (const platform of selected) {
  if (!targets.has(platform) && platform !== host) {
    console.error(`unknown platform ${platform}; known: ${[...targets.keys()].join(', ')} (or host)`)
    process.exit(2)
  }
}

const run = (cmd, argv, opts = {}) => {
  console.error(`$ ${cmd} ${argv.join(' ')}`)
  return spawnSync(cmd, argv, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts })
}
const have = (cmd, argv) => {
  const r = spawnSync(cmd, argv, { stdio: 'ignore' })
  return !r.error && r.status === 0
}

let cargoInfo
function cargo() {
  if (cargoInfo) return cargoInfo
  const r = spawnSync('cargo', ['metadata', '--no-deps', '--format-version', '1'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.status !== 0) throw new Error(`cargo metadata failed: ${r.stderr}`)
  const meta = JSON.parse(r.stdout)
  const lib = meta.packages[0].targets.find((t) => t.kind.includes('cdylib'))
  cargoInfo = { targetDir: meta.target_directory, lib: lib.name.replace(/-/g, '_') }
  return cargoInfo
}

/** Compiles one platform; returns the path of the built library. */
function compile(platform) {
  const triple = targets.get(platform) ?? hostTriple()
  const onWindows = process.platform === 'win32'
  const onMac = process.platform === 'darwin'
  const isHost = platform === host
  const zig = have('cargo', ['zigbuild', '--help'])
  let cargoTriple = triple
  let zigTarget = triple
  const env = { ...process.env }
  if (triple.endsWith('-windows-msvc') && !onWindows) {
    cargoTriple = triple.replace('-msvc', '-gnu')
    zigTarget = cargoTriple
  }
  if (triple.endsWith('-linux-gnu')) zigTarget = `${triple}.2.17`
  if (triple.endsWith('-linux-musl')) {
    env[`CARGO_TARGET_${triple.toUpperCase().replace(/-/g, '_')}_RUSTFLAGS`] = '-C target-feature=-crt-static'
  }
  const native = (isHost && !zig) || (onWindows && triple.endsWith('-windows-msvc')) || (onMac && triple.endsWith('-apple-darwin'))
  let r
  if (cargoTriple.endsWith('-windows-gnu') && !onWindows) {
    // zig's linker drops the export list of a Windows DLL (napi_register_module_v1 would be missing),
    // so Windows is linked with MinGW-w64's GCC. napi-build wants a libnode.dll for -gnu targets (a
    // MinGW-built Node); the addon resolves N-API from the host process at load time and links
    // nothing from it, so an empty import library satisfies the lookup.
    const gcc = `${cargoTriple.split('-')[0]}-w64-mingw32-gcc`
    if (!have(gcc, ['--version'])) throw new Error(`${gcc} is needed for ${platform} (Debian/Ubuntu: apt-get install mingw-w64)`)
    const stub = join(cargo().targetDir, 'napi-libnode-stub')
    mkdirSync(stub, { recursive: true })
    writeFileSync(join(stub, 'libnode.dll'), '')
    writeFileSync(join(stub, 'libnode.dll.a'), '!<arch>\n')
    env.LIBNODE_PATH ??= stub
    env[`CARGO_TARGET_${cargoTriple.toUpperCase().replace(/-/g, '_')}_LINKER`] ??= gcc
    r = run('cargo', ['build', '--release', '--locked', '--target', cargoTriple], { env })
  } else if (native) {
    if (isHost && triple.endsWith('-linux-gnu')) {
      console.error(`note: cargo-zigbuild not found; ${platform} is linked against this machine's glibc, not 2.17`)
    }
    r = run('cargo', ['build', '--release', '--locked', '--target', cargoTriple], { env })
  } else {
    if (!zig) throw new Error('cargo-zigbuild is needed for cross builds: pip install ziglang cargo-zigbuild')
    r = run('cargo', ['zigbuild', '--release', '--locked', '--target', zigTarget], { env })
  }
  if (r.status !== 0) throw new Error(`cargo exited with ${r.status ?? r.signal} for ${cargoTriple}`)
  const { targetDir, lib } = cargo()
  const file = cargoTriple.includes('windows') ? `${lib}.dll` : cargoTriple.includes('apple') ? `lib${lib}.dylib` : `lib${lib}.so`
  return { path: join(targetDir, cargoTriple, 'release', file), built: zigTarget !== triple && !native ? zigTarget : cargoTriple, glibc217: !native && zigTarget.endsWith('.2.17') }
}

function glibcFloor(file) {
  const r = spawnSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.status !== 0) return undefined
  const versions = [...new Set(r.stdout.match(/GLIBC_[0-9.]+/g) ?? [])]
  versions.sort(glibcFloor.compare)
  return versions.at(-1)
}
glibcFloor.compare = (a, b) => {
  const pa = a.slice(6).split('.').map(Number)
  const pb = b.slice(6).split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

function staticTls(file) {
  const r = spawnSync('readelf', ['-d', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
  return r.status === 0 && /\(FLAGS\)[^\n]*STATIC_TLS/.test(r.stdout)
}

function platformManifest(platform) {
  const committed = join(root, 'npm', platform, 'package.json')
  if (existsSync(committed)) return JSON.parse(readFileSync(committed, 'utf8'))
  // A platform without a committed package (e.g. a source build on macOS): same shape.
  const [os, cpu, abi] = platform.split('-')
  const file = `${binaryName}.${platform}.node`
  return {
    name: `${binaryName}-${platform}`,
    version,
    description: `The native addon of pi-native for ${platform}, built from source.`,
    os: [os],
    cpu: [cpu],
    ...(os === 'linux' ? { libc: [abi === 'musl' ? 'musl' : 'glibc'] } : {}),
    main: file,
    files: [file],
    license: manifest.license,
    engines: manifest.engines,
    repository: { type: 'git', url: `git+${repository}.git`, directory: `npm/${platform}` },
  }
}

/** npm pack in a staging folder; returns { filename, size, unpackedSize, files }. */
function pack(stage) {
  const r = spawnSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8', shell: process.platform === 'win32' })
  if (r.status !== 0) throw new Error(`npm pack failed in ${stage}: ${r.stderr}`)
  const info = JSON.parse(r.stdout)[0]
  return { filename: info.filename, size: info.size, unpackedSize: info.unpackedSize, files: info.files.map((f) => f.path) }
}

const kib = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`)

// ---- platform packages
mkdirSync(out, { recursive: true })
const staging = mkdtempSync(join(tmpdir(), 'pi-native-pack-'))
const rows = []
let failed = 0
for (const platform of selected) {
  const row = { package: `${binaryName}-${platform}`, platform }
  rows.push(row)
  try {
    const file = `${binaryName}.${platform}.node`
    let source
    let built
    if (build) {
      built = compile(platform)
      source = built.path
      row.rust = built.built
    } else {
      source = join(root, file)
      row.rust = 'prebuilt'
      if (!existsSync(source)) throw new Error(`${file} not found in the package root (build it first, or drop --no-build)`)
    }
    const pkg = platformManifest(platform)
    if (pkg.version !== version) throw new Error(`npm/${platform}/package.json has version ${pkg.version}, the main package ${version}`)
    const stage = join(staging, platform)
    mkdirSync(stage, { recursive: true })
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
    const readme = join(root, 'npm', platform, 'README.md')
    if (existsSync(readme)) copyFileSync(readme, join(stage, 'README.md'))
    copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'))
    copyFileSync(source, join(stage, file))
    row.binary = statSync(source).size
    if (platform.includes('-gnu') && platform.startsWith('linux')) {
      row.glibc = glibcFloor(source)
      // The glibc packages promise glibc 2.17: a dependency that pulls in a newer symbol breaks that.
      if (built?.glibc217 && row.glibc && row.glibc !== 'GLIBC_2.17' && glibcFloor.compare(row.glibc, 'GLIBC_2.17') > 0) {
        throw new Error(`${file} needs ${row.glibc}, above the GLIBC_2.17 the package promises (objdump -T)`)
      }
    }
    if (platform.endsWith('-musl') && staticTls(source)) {
      // musl's loader refuses a dlopen'd library with initial-exec TLS (DF_STATIC_TLS), and Node
      // loads the addon with dlopen: such a build fails on Alpine with "initial-exec TLS resolves
      // to dynamic definition".
      throw new Error(`${file} uses initial-exec TLS (DF_STATIC_TLS), which musl refuses in a dlopen'd addon`)
    }
    Object.assign(row, pack(stage))
    row.status = 'packed'
  } catch (error) {
    row.status = 'failed'
    row.error = error.message
    failed++
  }
}

// ---- main package (JavaScript only)
const main = { package: binaryName, platform: '-', rust: '-' }
rows.unshift(main)
try {
  const stage = join(staging, 'main')
  mkdirSync(stage, { recursive: true })
  for (const entry of manifest.files) {
    if (!existsSync(join(root, entry))) throw new Error(`"files" entry ${entry} does not exist`)
    cpSync(join(root, entry), join(stage, entry), { recursive: true })
  }
  const published = {
    ...manifest,
    optionalDependencies: Object.fromEntries([...targets.keys()].map((p) => [`${binaryName}-${p}`, version])),
  }
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(published, null, 2)}\n`)
  Object.assign(main, pack(stage))
  const binaries = main.files.filter((f) => f.endsWith('.node'))
  if (binaries.length > 0) throw new Error(`the main package must not contain binaries: ${binaries.join(', ')}`)
  main.status = 'packed'
} catch (error) {
  main.status = 'failed'
  main.error = error.message
  failed++
}
rmSync(staging, { recursive: true, force: true })

console.log(`\npackages in ${out}:`)
console.log('| package | status | built as | tarball | unpacked | .node | glibc floor |')
console.log('|---|---|---|---:|---:|---:|---|')
for (const r of rows) {
  console.log(
    `| ${r.filename ?? r.package} | ${r.status}${r.error ? `: ${r.error.split('\n')[0]}` : ''} | ${r.rust ?? ''} | ${r.size ? kib(r.size) : ''} | ${
      r.unpackedSize ? kib(r.unpackedSize) : ''
    } | ${r.binary ? kib(r.binary) : ''} | ${r.glibc ?? ''} |`,
  )
}
process.exit(failed > 0 ? 1 : 0)
