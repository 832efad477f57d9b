#!/usr/bin/env node
// Assembles one self-contained page from a template and a run's JSON (docs/TIMELINE.md):
//
//   node web/inline.mjs web/timeline/timeline.html data.json out.html
//
// The rules, which hapair's C++ writer mirrors exactly:
//  1. A line that is, apart from leading and trailing spaces or tabs, exactly
//       <script src="PATH"></script>          becomes  <script>\n FILE \n</script>
//       <link rel="stylesheet" href="PATH">   becomes  <style>\n FILE \n</style>
//     with PATH relative to the template's folder (no "..", URL or query rules: a plain path).
//     In the inlined text every "</script" (JS) or "</style" (CSS) is written "<\/script" /
//     "<\/style", case-insensitively, so the file cannot end its element early.
//  2. The one occurrence of /*HAPAIR_RUN_JSON*/ is replaced by the JSON text, with every "<"
//     written "\u003c" (valid JSON: JSON has "<" only inside strings, where the escape means
//     the same character), so neither "</script" nor "<!--" followed by "<script" (which would
//     make the HTML parser run past the data's </script>) can appear in it.
//     A script line whose PATH starts with wasm/ and does not exist is kept as it is (trimmed).
//  3. Nothing else changes. A missing file, a placeholder that is absent or present twice, or
//     a script holding "<!--" (ours never do) is an error (exit 1).
// DATA may be "-" (standard input). Without DATA and OUT, the template is inlined with its
// placeholder kept (to check the template's files).
import fs from 'node:fs';
import path from 'node:path';

const PLACEHOLDER = '/*HAPAIR_RUN_JSON*/';
const SCRIPT = /^[ \t]*<script src="([^"]+)"><\/script>[ \t]*$/;
const STYLE = /^[ \t]*<link rel="stylesheet" href="([^"]+)">[ \t]*$/;

export function inlineTemplate(templatePath, jsonText) {
  const dir = path.dirname(templatePath);
  const lines = fs.readFileSync(templatePath, 'utf8').split('\n');
  const out = lines.map((line) => {
    let m;
    if ((m = SCRIPT.exec(line))) {
      // The WebAssembly simulator (scripts/build_wasm.sh) is inlined only into the static demo:
      // without it the line stays (hapair demo answers it).
      if (m[1].startsWith('wasm/') && !fs.existsSync(path.join(dir, m[1]))) return line.trim();
      const raw = fs.readFileSync(path.join(dir, m[1]), 'utf8');
      // Same hazard as in the data, and JS cannot be escaped blindly ("<!--" is a comment there).
      if (raw.includes('<!--')) throw new Error(`${m[1]}: a script to inline must not contain "<!--"`);
      const text = raw.replace(/<\/(script)/gi, '<\\/$1');
      return `<script>\n${text}\n</script>`;
    }
    if ((m = STYLE.exec(line))) {
      const text = fs.readFileSync(path.join(dir, m[1]), 'utf8').replace(/<\/(style)/gi, '<\\/$1');
      return `<style>\n${text}\n</style>`;
    }
    return line;
  });
  let html = out.join('\n');
  if (jsonText === undefined) return html;
  const at = html.indexOf(PLACEHOLDER);
  if (at < 0) throw new Error(`${templatePath}: no ${PLACEHOLDER} placeholder`);
  if (html.indexOf(PLACEHOLDER, at + 1) >= 0) throw new Error(`${templatePath}: ${PLACEHOLDER} appears more than once`);
  const data = jsonText.replace(/</g, '\\u003c');
  // Concatenation, not String.replace: "$&" and the like in the data must stay as they are.
  html = html.slice(0, at) + data + html.slice(at + PLACEHOLDER.length);
  return html;
}

function main(argv) {
  if (argv.length !== 1 && argv.length !== 3) {
    process.stderr.write('usage: node web/inline.mjs TEMPLATE.html [DATA.json|- OUT.html]\n');
    return 2;
  }
  const [template, dataPath, outPath] = argv;
  try {
    let json;
    if (dataPath !== undefined) {
      json = fs.readFileSync(dataPath === '-' ? 0 : dataPath, 'utf8').replace(/\s+$/, '');
      JSON.parse(json); // refuse what the page could not read
    }
    const html = inlineTemplate(template, json);
    if (outPath === undefined) process.stdout.write(html);
    else fs.writeFileSync(outPath, html);
    return 0;
  } catch (err) {
    process.stderr.write(`inline.mjs: ${err.message}\n`);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('inline.mjs')) process.exitCode = main(process.argv.slice(2));
