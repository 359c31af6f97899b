// `npm run schema`: writes the files made from the schemas (core/engine/schemas.ts), the
// published config schema with the default preset's drivers' option schemas merged in. It lives
// here, not in core, because core names no built-in: the preset is handed to it.
import { createFlume } from '../dist/core/index.js';
import { writeSchemaFiles } from '../dist/core/engine/schemas.js';
import { defaultPreset } from '../dist/plugins/defaults.js';

const flume = await createFlume({ plugins: await defaultPreset() });
writeSchemaFiles(flume.agents.all());
