// The official @actions/artifact client, as upload-artifact and download-artifact use it.
//   node artifact.mjs upload NAME FOLDER RESULT.json   upload every file of FOLDER as artifact NAME
//   node artifact.mjs download ID FOLDER               download artifact ID of the current run
//   node artifact.mjs delete NAME RESULT.json          delete artifact NAME of the current run
// The service comes from ACTIONS_RESULTS_URL and ACTIONS_RUNTIME_TOKEN, as on a runner.
import {DefaultArtifactClient} from '@actions/artifact'
import {readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

function filesUnder(folder) {
  return readdirSync(folder, {withFileTypes: true}).flatMap(entry => {
    const path = join(folder, entry.name)
    return entry.isDirectory() ? filesUnder(path) : [path]
  })
}

const [command, ...args] = process.argv.slice(2)
const client = new DefaultArtifactClient()
if (command === 'upload') {
  const [name, folder, result] = args
  const uploaded = await client.uploadArtifact(name, filesUnder(folder), folder)
  writeFileSync(result, JSON.stringify(uploaded))
} else if (command === 'download') {
  const [id, folder] = args
  await client.downloadArtifact(Number(id), {path: folder})
} else if (command === 'delete') {
  const [name, result] = args
  const deleted = await client.deleteArtifact(name)
  writeFileSync(result, JSON.stringify(deleted))
} else {
  console.error('usage: node artifact.mjs upload NAME FOLDER RESULT.json | download ID FOLDER | delete NAME RESULT.json')
  process.exit(2)
}
