// npm run catalog:refresh — regenerates src/chat/catalog.json from pi-ai's published model catalog
// (the devDependency "pi-ai-0.84", i.e. @earendil-works/pi-ai 0.84.x). The Rust core embeds that
// file at build time. Output: {"source": {...}, "models": [Model, ...]} sorted by provider, then id.
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkgDir = join(root, 'node_modules', 'pi-ai-0.84')
const dataDir = join(pkgDir, 'dist', 'providers', 'data')
const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version
const manifest = JSON.parse(readFileSync(join(dataDir, '.manifest.json'), 'utf8'))

const models = []
for (const file of readdirSync(dataDir).filter((f) => f.endsWith('.json') && !f.startsWith('.')).sort()) {
  const bytes = readFileSync(join(dataDir, file))
  const expected = manifest.files?.[file]
  const actual = createHash('sha256').update(bytes).digest('hex')
  if (expected && expected !== actual) throw new Error(`catalog file ${file} does not match the manifest hash`)
  const byApi = JSON.parse(bytes.toString('utf8'))
  for (const api of Object.keys(byApi)) for (const model of Object.values(byApi[api])) models.push(model)
}
models.sort((a, b) => (a.provider === b.provider ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.provider < b.provider ? -1 : 1))
const out = {
  source: { package: '@earendil-works/pi-ai', version, generatedAt: manifest.generatedAt, structureHash: manifest.structureHash },
  models,
}
writeFileSync(join(root, 'src', 'chat', 'catalog.json'), JSON.stringify(out) + '\n')
console.log(`catalog: ${models.length} models from pi-ai ${version} (${manifest.generatedAt})`)
