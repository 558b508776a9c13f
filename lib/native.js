// Loads the generated napi-rs loader and turns a missing/broken binary into one clear error.
// The message deliberately names the binary file, never a quoted package specifier, so an optional
// peer consumer's "package absent" test (code MODULE_NOT_FOUND + quoted name) cannot mistake a
// broken install for an absent package.
let binding
try {
  binding = await import('../index.js')
} catch (cause) {
  const triple = `${process.platform}-${process.arch}`
  const error = new Error(
    `pi-native is installed but its native addon for ${triple} could not be loaded ` +
      `(looked for pi-native.${triple}-gnu.node in the package folder and the optional package ` +
      `pi-native-${triple}-gnu). Reinstall pi-native, or build it with \`npm run build\`. ` +
      `Cause: ${cause && cause.message ? cause.message.split('\n')[0] : String(cause)}`,
    { cause },
  )
  error.code = 'PI_NATIVE_BINARY_UNAVAILABLE'
  throw error
}
export default binding
