// Loads the generated napi-rs loader (../index.js) and turns a missing or unloadable binary into one
// error that says what to do: which platform this is, which file and package should provide the
// addon, and the command that fixes it for an end user.
//
// The message never quotes a package specifier ('pi-native', '@r3b1s/pi-repair-layer', ...): an
// optional-peer consumer treats an import error as "package absent" only for MODULE_NOT_FOUND naming
// the quoted specifier, and a broken install must never pass for an absent package.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

let binding
try {
  binding = await import('../index.js')
} catch (cause) {
  const error = new Error(describeLoadFailure(cause), { cause })
  error.code = 'PI_NATIVE_BINARY_UNAVAILABLE'
  throw error
}
export default binding

/** The napi-rs platform name the generated loader looks for (same rules as ../index.js). */
function platformName() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const libc = isMusl() ? 'musl' : 'gnu'
    if (arch === 'arm') return `linux-arm-${libc}eabihf`
    return `linux-${arch}-${libc}`
  }
  if (platform === 'win32') {
    const vars = process.config?.variables ?? {}
    const gnu = arch === 'x64' && (vars.shlib_suffix === 'dll.a' || vars.node_target_type === 'shared_library')
    return `win32-${arch}-${gnu ? 'gnu' : 'msvc'}`
  }
  if (platform === 'android' && arch === 'arm') return 'android-arm-eabi'
  return `${platform}-${arch}`
}

/** napi-rs platform name of a Rust target triple (x86_64-pc-windows-msvc -> win32-x64-msvc). */
function platformOfTriple(triple) {
  const [cpu, , sys, abi] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm', riscv64gc: 'riscv64', powerpc64le: 'ppc64', s390x: 's390x', loongarch64: 'loong64' }[cpu]
  if (!arch) return undefined
  if (triple.includes('-apple-darwin')) return `darwin-${arch}`
  if (sys === 'windows') return `win32-${arch}-${abi}`
  if (sys === 'linux') return `linux-${arch}-${abi}`
  if (sys === 'freebsd') return `freebsd-${arch}`
  return undefined
}

function isMusl() {
  try {
    if (readFileSync('/usr/bin/ldd', 'utf8').includes('musl')) return true
  } catch {
    // no ldd: ask the process report
  }
  try {
    const report = process.report?.getReport?.()
    if (report?.header?.glibcVersionRuntime) return false
    return Array.isArray(report?.sharedObjects) && report.sharedObjects.some((f) => /libc\.musl-|ld-musl-/.test(f))
  } catch {
    return false
  }
}

function firstLine(value) {
  const text = value && typeof value.message === 'string' ? value.message : String(value)
  return text.split('\n')[0].replace(/[.\s]+$/, '')
}

function describeLoadFailure(cause) {
  const require = createRequire(import.meta.url)
  let manifest = {}
  try {
    manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  } catch {
    // keep the defaults below
  }
  const version = manifest.version ?? 'unknown'
  const binaryName = manifest.napi?.binaryName ?? 'pi-native'
  const platform = platformName()
  const file = `${binaryName}.${platform}.node`
  const pkg = `${binaryName}-${platform}`
  // The published package names its platform packages in optionalDependencies (written at pack
  // time); a source checkout only has the napi target list.
  const optional = Object.keys(manifest.optionalDependencies ?? {}).filter((name) => name.startsWith(`${binaryName}-`))
  const shipped =
    optional.length > 0
      ? optional.map((name) => name.slice(binaryName.length + 1))
      : (manifest.napi?.targets ?? []).map(platformOfTriple).filter(Boolean)
  const where = `${process.platform}-${process.arch}${platform.includes('musl') ? ' (musl libc)' : ''}`
  const head = `pi-native ${version}: the native addon for ${where} could not be loaded.`
  const fromSource =
    'build it from source: in a clone of the pi-native repository, with a Rust toolchain (rustup) and a C compiler, ' +
    `run \`node scripts/package.mjs host\` and \`npm install\` the two tarballs it writes to pack/ (README, "Build from source"); ` +
    'or point NAPI_RS_NATIVE_LIBRARY_PATH at a built .node file.'

  // An explicit override that fails is the user's own path.
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) {
    return (
      `${head} NAPI_RS_NATIVE_LIBRARY_PATH is set to ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH} and loading it failed: ` +
      `${firstLine(cause)}. Unset it to use the prebuilt ${file}, or point it at a working build.`
    )
  }

  // A binary in the package folder itself (a source checkout, or a hand-copied file) that fails.
  const local = new URL(`../${file}`, import.meta.url)
  if (existsSync(local)) {
    let detail = firstLine(cause)
    try {
      require(`../${file}`)
    } catch (error) {
      detail = firstLine(error)
    }
    return `${head} ${file} is in the package folder but does not load: ${detail}. Rebuild it, or delete it to fall back on the package ${pkg}.`
  }

  if (!shipped.includes(platform)) {
    const list = shipped.length > 0 ? shipped.join(', ') : 'none'
    return (
      `${head} No prebuilt ${file} ships for this platform (prebuilt platforms: ${list}). ` +
      `To use pi-native here, ${fromSource}`
    )
  }

  let installed = false
  try {
    require.resolve(`${pkg}/package.json`)
    installed = true
  } catch {
    installed = false
  }
  if (installed) {
    let detail = firstLine(cause)
    try {
      require(pkg)
    } catch (error) {
      detail = firstLine(error)
    }
    const glibc = /GLIBC_[0-9.]+/.test(detail)
      ? ' This build needs glibc >= 2.17; on an older or a musl system use the matching package.'
      : ''
    return (
      `${head} The optional package ${pkg}@${version} is installed but its ${file} does not load: ${detail}.${glibc} ` +
      `Fix: reinstall it — \`npm install ${pkg}@${version}\` — or remove node_modules and package-lock.json and run \`npm install\` again. ` +
      `If that does not help, ${fromSource}`
    )
  }
  return (
    `${head} It ships in the optional dependency ${pkg}@${version} (file ${file}), which is not installed: ` +
    'npm skips optional dependencies with --omit=optional / --no-optional, and a package-lock.json written on another ' +
    'platform can leave it out (npm/cli#4828). ' +
    `Fix: remove node_modules and package-lock.json, then run \`npm install\` with optional dependencies enabled, ` +
    `or add it explicitly: \`npm install ${pkg}@${version}\`. Otherwise ${fromSource}`
  )
}
