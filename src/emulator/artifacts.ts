// Result entries point at a screenshot, the page HTML and the console log. Real BrowserAI serves
// them from its own storage without the API token (the links are meant to be opened directly),
// so the emulator serves small but real files the same way, and a client that downloads them
// has something genuine to store.

export type ArtifactKind = 'screenshot' | 'html' | 'console';

const FILE_NAMES: Record<ArtifactKind, string> = {
  screenshot: 'screenshot.png',
  html: 'page.html',
  console: 'console.log',
};

const KIND_BY_FILE = new Map<string, ArtifactKind>(
  Object.entries(FILE_NAMES).map(([kind, file]) => [file, kind as ArtifactKind]),
);

/** A 1x1 PNG: the smallest file image tools accept as a screenshot. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

export function artifactUrl(origin: string, executionId: string, historyIndex: number, kind: ArtifactKind): string {
  return `${origin}/artifacts/${encodeURIComponent(executionId)}/${historyIndex}/${FILE_NAMES[kind]}`;
}

export interface ArtifactRequest {
  executionId: string;
  historyIndex: number;
  kind: ArtifactKind;
}

/** Parses `/artifacts/{executionId}/{index}/{file}`; undefined for anything else. */
export function parseArtifactPath(path: string): ArtifactRequest | undefined {
  const match = /^\/artifacts\/([^/]+)\/(\d+)\/([^/]+)$/.exec(path);
  if (!match) return undefined;
  const kind = KIND_BY_FILE.get(match[3]!);
  if (!kind) return undefined;
  let executionId: string;
  try {
    executionId = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  return { executionId, historyIndex: Number(match[2]), kind };
}

export function artifactContent(kind: ArtifactKind, step: number): { contentType: string; body: Buffer } {
  switch (kind) {
    case 'screenshot':
      return { contentType: 'image/png', body: PNG };
    case 'html':
      return {
        contentType: 'text/html; charset=utf-8',
        body: Buffer.from(
          `<!doctype html>\n<html><head><title>Example page ${step}</title></head>` +
            `<body><h1>Example page ${step}</h1></body></html>\n`,
        ),
      };
    case 'console':
      return {
        contentType: 'text/plain; charset=utf-8',
        body: Buffer.from(`[info] page loaded (step ${step})\n[info] step ${step} done\n`),
      };
  }
}
